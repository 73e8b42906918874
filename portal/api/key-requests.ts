import { ApiError } from '../../lib/api-error';
import { quotedInMessage } from '../../lib/plain-text';
import { REQUEST_ID_SHAPE } from '../../lib/request-id';
import type { LoggedRequest, RequestLogPage, RequestLogQuery, StatusFilter } from '../../gateway/request-log/request-log';
import { parseCursor, STATUS_FILTERS } from '../../gateway/request-log/request-log';

/** A key's request log as the portal reads it: only for the key's owner. */
export interface KeyRequestLog {
  ownsKey(accountId: number, keyId: string): Promise<boolean>;
  read(keyId: string, query: RequestLogQuery): Promise<RequestLogPage>;
}

const DEFAULT_REQUESTS_LIMIT = 50;
const MAX_REQUESTS_LIMIT = 100;
const PARAMETERS = ['limit', 'after', 'status', 'requestId'] as const;
const LIMIT = /^\d{1,3}$/;

/**
 * `?limit=&after=&status=&requestId=` of a request URL, checked as the public API checks its
 * queries: an unknown or repeated parameter, or a value out of range, is a 400 naming it.
 */
export function readKeyRequestsQuery(url: string): RequestLogQuery {
  const q = url.indexOf('?');
  const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  const raw: Partial<Record<(typeof PARAMETERS)[number], string>> = {};
  for (const name of new Set(params.keys())) {
    if (!(PARAMETERS as readonly string[]).includes(name)) {
      throw new ApiError('invalid_request', `query parameter "${quotedInMessage(name)}" is not supported; allowed: ${PARAMETERS.join(', ')}`);
    }
    const values = params.getAll(name);
    if (values.length > 1) throw new ApiError('invalid_request', `query parameter "${name}" must not be repeated`);
    raw[name as (typeof PARAMETERS)[number]] = values[0];
  }
  const query: RequestLogQuery = { limit: DEFAULT_REQUESTS_LIMIT };
  if (raw.limit !== undefined) {
    const limit = LIMIT.test(raw.limit) ? Number(raw.limit) : NaN;
    if (!(limit >= 1 && limit <= MAX_REQUESTS_LIMIT)) throw new ApiError('invalid_request', `query parameter "limit" must be an integer from 1 to ${MAX_REQUESTS_LIMIT}`);
    query.limit = limit;
  }
  if (raw.after !== undefined) {
    if (!parseCursor(raw.after)) throw new ApiError('invalid_request', 'query parameter "after" must be the id of a logged request, as in the Link of the previous page');
    query.after = raw.after;
  }
  if (raw.status !== undefined) {
    if (!(STATUS_FILTERS as readonly string[]).includes(raw.status)) throw new ApiError('invalid_request', `query parameter "status" must be one of ${STATUS_FILTERS.join(', ')}`);
    query.status = raw.status as StatusFilter;
  }
  if (raw.requestId !== undefined) {
    if (!REQUEST_ID_SHAPE.test(raw.requestId)) throw new ApiError('invalid_request', 'query parameter "requestId" must be 1 to 128 letters, digits, ".", "_", ":" or "-", as in X-Request-Id');
    query.requestId = raw.requestId;
  }
  return query;
}

export const loggedRequestBody = (request: LoggedRequest) => ({
  id: request.id,
  time: new Date(request.time).toISOString(),
  method: request.method,
  path: request.path,
  status: request.status,
  code: request.code,
  latencyMs: request.latencyMs,
  cache: request.cache,
  requestId: request.requestId,
});
