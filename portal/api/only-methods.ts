import type { RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';

/** 405 with `Allow` for other methods on a known path; OPTIONS answers with `Allow` alone. */
export function onlyMethods(...methods: string[]): RequestHandler {
  const allow = (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
  return function methodNotAllowed(req, res) {
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allow).status(204).end();
      return;
    }
    throw new ApiError('method_not_allowed', `${req.method} is not allowed here; allowed: ${allow}.`, { headers: { Allow: allow } });
  };
}
