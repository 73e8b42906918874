import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { bodyStillArriving } from '../lib/render-error';

/**
 * A response that finishes before its request's body has ended (a refusal that never read it)
 * leaves Node reading and discarding that body for as long as the client sends it. Such a
 * connection is closed if the body has not ended `graceMs` after the response: time enough for a
 * finite body to arrive, so the connection can serve the next request, and a bound on one that
 * never ends. Error bodies already say `Connection: close` (lib/render-error.ts); this covers every
 * other response, on every surface.
 */
export function closeUnreadBodies(server: Server, graceMs: number): void {
  function responseFinished(this: ServerResponse): void {
    const req = this.req;
    if (!bodyStillArriving(req)) return;
    setTimeout(cutIfUnread, graceMs, req).unref();
  }
  server.on('request', function watchUnreadBody(req: IncomingMessage, res: ServerResponse) {
    // Requests without a body (most of them) pay two header lookups and nothing else.
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) return;
    res.on('finish', responseFinished);
  });
}

function cutIfUnread(req: IncomingMessage): void {
  if (!req.complete) req.socket.destroy();
}
