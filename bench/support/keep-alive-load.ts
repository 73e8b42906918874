import { Agent, request } from 'node:http';

export interface KeepAliveLoad {
  /** Sends exactly `requests` GETs; throws if any answer is not 200 (refusals measure the wrong path). */
  send(requests: number): Promise<void>;
  close(): void;
}

/**
 * GETs of `url` over `connections` keep-alive connections, each sending its next request when
 * the last answer has been read (as wrk does, but counted, not timed). The same connections
 * serve every `send`: new ones would send the server through its connection set-up and
 * tear-down paths, which V8 then recompiles, between a warm-up and the measured requests.
 */
export function keepAliveLoad(url: string, headers: Record<string, string>, connections = 8): KeepAliveLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port, pathname, search } = new URL(url);
  const one = (): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: hostname, port, path: pathname + search, headers, agent }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode!));
      });
      // A server may close a connection idle past its keep-alive timeout just as it is reused (a
      // server under valgrind can stall that long): the GET was not answered, and is sent again.
      req.once('error', (err: NodeJS.ErrnoException) => (req.reusedSocket && err.code === 'ECONNRESET' ? one().then(resolve, reject) : reject(err)));
      req.end();
    });
  return {
    async send(requests) {
      let sent = 0;
      const refused = new Map<number, number>();
      const connection = async () => {
        while (sent < requests) {
          sent++;
          const status = await one();
          if (status !== 200) refused.set(status, (refused.get(status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: connections }, connection));
      if (refused.size) throw new Error(`${url}: answers other than 200: ${[...refused].map(([s, n]) => `${n} × ${s}`).join(', ')}`);
    },
    close: () => agent.destroy(),
  };
}
