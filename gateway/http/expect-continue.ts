import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';
import { quotedInMessage } from '../../lib/plain-text';

/**
 * `Expect: 100-continue` is answered when the body is about to be read, not on arrival as Node
 * does by itself: a request refused first (401, 413, 429, …) gets its refusal with no invitation
 * to send a body it would not read. Whatever starts reading the body (lib/read-json-body.ts for
 * the API and the portal, the proxy's pipe) resumes the request stream, and that sends the 100.
 */
export function continueWhenBodyIsRead(server: Server): void {
  server.on('checkContinue', function deferContinue(req: IncomingMessage, res: ServerResponse) {
    req.once('resume', () => {
      // Node also resumes an unread body to discard it once the response is written: too late to invite it.
      if (!res.headersSent) res.writeContinue();
    });
    server.emit('request', req, res);
  });
}

/**
 * Any `Expect` but 100-continue is refused with 417 by the surface that answers the request (the
 * API pipeline after the key and its budget, the Express app first), so the 417 carries the same
 * request id and rate-limit headers as every other answer. Node would answer it with a bare 417.
 */
export function passOnOtherExpectations(server: Server): void {
  server.on('checkExpectation', function passOnExpectation(req: IncomingMessage, res: ServerResponse) {
    server.emit('request', req, res);
  });
}

/** The 417 for an expectation the gateway cannot meet, or undefined when there is none to refuse. */
export function unsupportedExpectation(req: IncomingMessage): ApiError | undefined {
  const expect = req.headers.expect;
  if (expect === undefined || CONTINUE.test(expect)) return undefined;
  return new ApiError('expectation_failed', `Only "Expect: 100-continue" is supported; this request expected "${quotedInMessage(expect)}".`);
}

/** Express middleware for the portal and admin apps: passes on the 417 of `unsupportedExpectation` as an error, or goes on. */
export const refuseUnmetExpectation: RequestHandler = function refuseUnmetExpectation(req, _res, next) {
  next(unsupportedExpectation(req));
};

/** What Node itself takes for 100-continue (its continueExpression). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;
