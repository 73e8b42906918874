import type { Server } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';

export interface ListenAddress {
  port: number;
  /** A base URL a client on this machine can call. */
  url: string;
  /** The address actually bound, e.g. `127.0.0.1:8080`, or `0.0.0.0:8080 (all interfaces)`. */
  bound: string;
}

/** What a listener bound, and a URL that reaches it from this machine: a wildcard address is no place to connect to. */
export function describeListenAddress({ address, port }: AddressInfo, host: string): ListenAddress {
  const hostPort = `${address.includes(':') ? `[${address}]` : address}:${port}`;
  if (address === '0.0.0.0' || address === '::') return { port, url: `http://127.0.0.1:${port}`, bound: `${hostPort} (all interfaces)` };
  // A host name the operator chose (localhost) stays in the URL: it is the origin browsers will use.
  return { port, url: `http://${isIP(host) ? hostPort : `${host}:${port}`}`, bound: hostPort };
}

/** Listens on `host:port` (0 = any free port); resolves with what was bound. */
export async function listenAt(server: Server, host: string, port: number): Promise<ListenAddress> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return describeListenAddress(server.address() as AddressInfo, host);
}
