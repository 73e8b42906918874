import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SlotSet } from './slot-set';

export interface DrainReport {
  /** Requests in progress when the drain began. */
  inFlight: number;
  /** Requests whose connections were cut because they outlived the grace period. */
  cut: number;
  drainMs: number;
}

export interface HttpDrain {
  /**
   * Stops accepting connections, lets in-flight requests finish for up to `graceMs`, then cuts
   * the connections that are left. Resolves once the server is closed.
   */
  drain(graceMs: number): Promise<DrainReport>;
  /** The requests in progress now: received, their responses not yet closed. */
  requestsInFlight(): number;
}

/**
 * Tracks a server's in-flight responses so a stop can wait for them. Must be attached before
 * the server's own request handler. While draining, every response carries `Connection: close`,
 * so keep-alive clients move to another instance instead of sending more requests here.
 *
 * It also closes, as responses whose client left, the ones Node forgets: when a connection closes,
 * Node destroys the pipelined requests queued behind an unanswered one but emits nothing on their
 * responses (no 'finish', no 'close'), and whatever waits for a response's 'close' (this tracking,
 * the request log, the proxy's abort of its upstream call) would wait for ever.
 */
export function trackForDrain(server: Server): HttpDrain {
  // A SlotSet, not a Set: a Set churned once per request keeps dead responses alive through
  // scavenges (see SlotSet) and costs a third of the throughput under load.
  const inFlight = new SlotSet<ServerResponse>();
  let draining = false;

  // One listener function for every response (no closure per request); 'close' comes once per response.
  function responseClosed(this: ServerResponse): void {
    inFlight.delete(this);
    // A connection whose response began before the drain could not be told to close: close it now that it is idle.
    if (draining) setImmediate(() => server.closeIdleConnections());
  }
  // A queued response also leaves its socket's queue when it closes, so a connection kept open holds no finished ones.
  function queuedResponseClosed(this: ServerResponse): void {
    responseClosed.call(this);
    dropClosedFromFront((this.req.socket as QueuingSocket)[QUEUED]);
  }
  server.prependListener('request', function trackResponse(req: IncomingMessage, res: ServerResponse) {
    inFlight.add(res);
    if (draining) closeAfterResponse(res);
    // Node hands a response the socket at once unless an earlier one on the connection is unanswered: only those queue.
    if (res.socket) return void res.on('close', responseClosed);
    res.on('close', queuedResponseClosed);
    queueBehind(req.socket as QueuingSocket, res);
  });

  return {
    requestsInFlight: () => inFlight.size,
    async drain(graceMs) {
      const started = Date.now();
      draining = true;
      const report = { inFlight: inFlight.size, cut: 0 };
      for (const res of inFlight) closeAfterResponse(res);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)));
      const timedOut = await Promise.race([closed.then(() => false), graceOver]);
      clearTimeout(timer);
      if (timedOut) {
        report.cut = inFlight.size;
        server.closeAllConnections();
        await closed;
      }
      return { ...report, drainMs: Date.now() - started };
    },
  };
}

function closeAfterResponse(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/** The responses of a socket's pipelined requests, in order, that may still be waiting for it (Node's own queue is out of reach). */
const QUEUED = Symbol('queuedResponses');
type QueuingSocket = Socket & { [QUEUED]?: ServerResponse[] };

function queueBehind(socket: QueuingSocket, res: ServerResponse): void {
  let queued = socket[QUEUED];
  if (queued === undefined) {
    // One listener a socket, not one a queued response: a client can pipeline thousands, and Node warns past 10.
    socket[QUEUED] = queued = [];
    socket.once('close', closeQueued);
  }
  queued.push(res);
}

/** Responses get the socket, finish and close in order, so the closed ones are at the front. */
function dropClosedFromFront(queued: ServerResponse[] | undefined): void {
  while (queued !== undefined && queued.length > 0 && queued[0]!.closed) queued.shift();
}

/** A socket's 'close', heard after Node's own (which destroyed the queued requests): closes each response that never got the socket. */
function closeQueued(this: QueuingSocket): void {
  const queued = this[QUEUED]!;
  // Detached first: each close below runs queuedResponseClosed, which must not shift the list being walked.
  this[QUEUED] = undefined;
  for (const res of queued) {
    // One holding the socket is closed by Node itself, and one that finished closes on its own.
    if (!res.socket && !res.closed && !res.writableFinished) clientLeft(res);
  }
}

/** What Node does to a response whose socket closes under it (emitCloseNT): destroyed, closed (so Node never closes it again), then 'close'. */
function clientLeft(res: ServerResponse): void {
  res.destroyed = true;
  (res as ServerResponse & { _closed: boolean })._closed = true;
  res.emit('close');
}
