import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's `X-Request-Id` when it is safe to echo and log; a fresh UUID otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE.test(given) ? given : randomUUID();
}
