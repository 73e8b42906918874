import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What an `X-Request-Id` the gateway echoes, logs and lets a request log be searched by may be. */
export const REQUEST_ID_SHAPE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's `X-Request-Id` when it is safe to echo and log; a fresh UUID otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_SHAPE.test(given) ? given : randomUUID();
}
