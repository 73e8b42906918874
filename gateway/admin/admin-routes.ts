import type { RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';
import { quotedInMessage } from '../../lib/plain-text';
import { declaresBody, readJsonBody } from '../../lib/read-json-body';
import type { OpenApiDocument } from '../../openapi/document';
import { compileOperations } from '../../openapi/operations';
import type { AdminHandler } from './admin-handlers';
import { adminState } from './admin-state';

export interface AdminRoutesOptions {
  /** openapi/admin.yaml: its paths, parameters and bodies decide what is matched and accepted. */
  document: OpenApiDocument;
  /** One handler per operationId of the document, no more, no fewer. */
  handlers: Record<string, AdminHandler>;
  /** Where the document's paths live (its server URL), e.g. `/admin/v1`. */
  basePath: string;
  maxBodyBytes: number;
}

/**
 * Matches a request against the admin document, validates its path, query and body from it, and
 * dispatches by operationId: 404 for an unknown path, 405 with `Allow` for a wrong method, 400
 * `invalid_request` naming the parameter or field. Built once; a handler missing for an
 * operation (or one without an operation) fails the start, not a request.
 */
export function adminRoutes({ document, handlers, basePath, maxBodyBytes }: AdminRoutesOptions): RequestHandler {
  const table = compileOperations(document);
  const operationIds = table.operations.map((op) => op.operationId);
  const missing = operationIds.filter((id) => !handlers[id]);
  const extra = Object.keys(handlers).filter((id) => !operationIds.includes(id));
  if (missing.length || extra.length) throw new Error(`adminRoutes: no handler for ${missing.join(', ') || '-'}; no operation for ${extra.join(', ') || '-'}`);

  return async function dispatchAdminRequest(req, res) {
    const url = req.originalUrl;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const route = path.startsWith(`${basePath}/`) ? table.match(req.method, path.slice(basePath.length)) : ({ kind: 'not_found' } as const);
    if (route.kind === 'not_found') throw new ApiError('not_found', `No admin operation at ${req.method} ${quotedInMessage(path)}.`);
    if (route.kind === 'method_not_allowed') {
      throw new ApiError('method_not_allowed', `${req.method} is not allowed here; allowed: ${route.allow}.`, { headers: { Allow: route.allow } });
    }
    const { operation } = route;
    const state = adminState(res);
    state.operation = { operationId: operation.operationId, pathTemplate: operation.pathTemplate };
    const params = operation.parsePathParams(route.rawParams);
    const query = operation.parseQuery(new URLSearchParams(q === -1 ? '' : url.slice(q + 1)));
    let body: unknown;
    if (!operation.acceptsBody) {
      if (declaresBody(req)) throw new ApiError('invalid_request', `${operation.method} ${basePath}${operation.pathTemplate} takes no request body.`);
    } else if (declaresBody(req) || operation.requiresBody) {
      body = (await readJsonBody(req, maxBodyBytes)).value;
      operation.checkBody(body);
    }
    const reply = await handlers[operation.operationId]!({
      params,
      query,
      body,
      audit: { actor: state.actor!, requestId: state.requestId },
    });
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body === undefined) res.status(reply.status).end();
    else res.status(reply.status).json(reply.body);
  };
}
