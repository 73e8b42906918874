import { ApiError } from '../lib/api-error';

/** Node socket errors and PostgreSQL SQLSTATE classes that mean "the store is not there right now". */
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const TRANSIENT_SQLSTATE = /^(08|53|57P0)/; // connection exception, insufficient resources, admin/crash shutdown

/**
 * Turns a store outage into 503 `service_unavailable` so callers answer quickly and clearly;
 * anything else (a bug, a constraint violation) passes through unchanged.
 */
export function asUnavailable(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  const transient =
    TRANSIENT_NODE_CODES.has(code) ||
    TRANSIENT_SQLSTATE.test(code) ||
    /Connection terminated|timeout exceeded|Query read timeout|Client has encountered a connection error/i.test(message);
  return transient ? new ApiError('service_unavailable', 'The data store is temporarily unavailable; retry shortly.', { cause: err, headers: { 'Retry-After': '1' } }) : err;
}
