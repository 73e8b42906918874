import type { IncomingMessage, Server, ServerResponse } from 'node:http';
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
}

/**
 * Tracks a server's in-flight responses so a stop can wait for them. Must be attached before
 * the server's own request handler. While draining, every response carries `Connection: close`,
 * so keep-alive clients move to another instance instead of sending more requests here.
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
  server.prependListener('request', function trackResponse(_req: IncomingMessage, res: ServerResponse) {
    inFlight.add(res);
    res.on('close', responseClosed);
    if (draining) closeAfterResponse(res);
  });

  return {
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
