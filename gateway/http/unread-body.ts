import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { declaresBody } from '../../lib/read-json-body';
import { bodyStillArriving } from '../../lib/render-error';

/**
 * A response that finishes before its request's body has ended (a refusal that never read it)
 * leaves Node reading and discarding that body for as long as the client sends it. Such a
 * connection is closed if the body has not ended `graceMs` after the response: time enough for a
 * finite body to arrive, so a keep-alive connection can serve the next request, and a bound on one
 * that never ends. Error bodies say `Connection: close` (lib/render-error.ts); this covers them
 * and every other response, on every surface.
 */
export function closeUnreadBodies(server: Server, graceMs: number): void {
  function responseFinished(this: ServerResponse): void {
    const req = this.req;
    if (!bodyStillArriving(req)) return;
    // Node destroys a `Connection: close` response's socket once its bytes are written (destroySoon). With
    // a body still arriving the kernel then sends a reset, which can cost the client the response
    // itself: the socket lingers instead, reading and discarding, as nginx's lingering close does.
    req.socket.removeListener('finish', req.socket.destroy);
    setTimeout(closeAfterGrace, graceMs, req).unref();
  }
  server.on('request', function watchUnreadBody(req: IncomingMessage, res: ServerResponse) {
    // Requests without a body (most of them) pay one check of their headers and nothing else.
    if (!declaresBody(req)) return;
    res.on('finish', responseFinished);
  });
}

function closeAfterGrace(req: IncomingMessage): void {
  // A socket the response ended (`Connection: close`) has nothing more to do once the body had its time.
  if (!req.complete || req.socket.writableEnded) req.socket.destroy();
}
