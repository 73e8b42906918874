import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';

/** Long enough for a server under valgrind; a request past it means the server has hung. */
const REQUEST_TIMEOUT_MS = 60_000;

export interface KeepAliveLoad {
  /** Sends exactly `requests` GETs; rejects at the first failure or answer other than 200 (refusals measure the wrong path). */
  send(requests: number): Promise<void>;
  /** Connections opened so far: the same count before and after a `send` means it used the same ones. */
  connectionsOpened(): number;
  close(): void;
}

/**
 * GETs of `url` over `connections` keep-alive connections, each sending its next request when
 * the last answer has been read (as wrk does, but counted, not timed). The same connections
 * serve every `send`: new ones would send the server through its connection set-up and
 * tear-down paths, which V8 then recompiles, between a warm-up and the measured requests.
 */
export function keepAliveLoad(url: string, headers: Record<string, string>, connections: number): KeepAliveLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port, pathname, search } = new URL(url);
  const sockets = new WeakSet<Socket>();
  let opened = 0;
  let stopped = false;

  const one = (): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: hostname, port, path: pathname + search, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        res.resume();
        res.once('close', () => (res.complete ? resolve(res.statusCode!) : reject(new Error(`${url}: the answer broke off`))));
      });
      req.on('socket', (socket) => {
        if (!sockets.has(socket)) opened++;
        sockets.add(socket);
      });
      req.once('timeout', () => req.destroy(new Error(`${url}: no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      // A server may close a connection idle past its keep-alive timeout just as it is reused: the
      // GET was not answered, and is sent again (a server that read it and dropped it is counted twice).
      req.on('error', (err: NodeJS.ErrnoException) => (req.reusedSocket && err.code === 'ECONNRESET' && !stopped ? one().then(resolve, reject) : reject(err)));
      req.end();
    });

  return {
    async send(requests) {
      if (!Number.isSafeInteger(requests) || requests < 1) throw new Error(`requests must be a positive integer; got ${requests}`);
      let sent = 0;
      let failed = false;
      const connection = async () => {
        while (!failed && !stopped && sent < requests) {
          sent++;
          const status = await one().catch((err: unknown) => {
            failed = true;
            throw err;
          });
          if (status !== 200) {
            failed = true;
            throw new Error(`${url}: answered ${status}, not 200`);
          }
        }
      };
      await Promise.all(Array.from({ length: connections }, connection));
      if (stopped) throw new Error(`${url}: the load was closed while sending`);
    },
    connectionsOpened: () => opened,
    close() {
      stopped = true;
      agent.destroy();
    },
  };
}
