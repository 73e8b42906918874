import type { Request, RequestHandler, Router } from 'express';
import { ApiError } from '../../lib/api-error';
import { quotedInMessage } from '../../lib/plain-text';
import { readUsageDays, type DailyUsageService } from '../../identity/daily-usage-service';
import { onlyMethods } from './only-methods';
import { currentSession } from './session-auth';

const QUERY_PARAMETERS = ['days'];

/** `?days=N` and nothing else: a stray or repeated parameter is a 400 naming it, as on the public API. */
function readDaysQuery(req: Request): number {
  for (const name of Object.keys(req.query)) {
    if (!QUERY_PARAMETERS.includes(name)) {
      throw new ApiError('invalid_request', `Unknown query parameter "${quotedInMessage(name)}"; allowed: ${QUERY_PARAMETERS.join(', ')}.`);
    }
  }
  return readUsageDays(req.query.days);
}

/**
 * `GET /usage` (the account) and `GET /keys/{id}/usage` (one key): requests per UTC day by outcome,
 * one entry per day, oldest first. A key of another account is a 404, as an unknown one: its
 * existence is nobody else's business.
 */
export function usageRoutes(router: Router, deps: { dailyUsage: Pick<DailyUsageService, 'forKey' | 'forAccount'>; signedIn: RequestHandler }): void {
  const { dailyUsage, signedIn } = deps;

  router
    .route('/usage')
    .get(signedIn, async function accountUsage(req, res) {
      const days = readDaysQuery(req);
      res.status(200).json({ days: await dailyUsage.forAccount(currentSession(res).accountId, days) });
    })
    .all(onlyMethods('GET'));

  router
    .route('/keys/:id/usage')
    .get(signedIn, async function keyUsage(req, res) {
      const days = readDaysQuery(req);
      res.status(200).json({ days: await dailyUsage.forKey(currentSession(res).accountId, String(req.params.id), days) });
    })
    .all(onlyMethods('GET'));
}
