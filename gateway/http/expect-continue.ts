import type { IncomingMessage, Server, ServerResponse } from 'node:http';

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
