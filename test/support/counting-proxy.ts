import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A transparent HTTP forwarder in front of a real upstream that counts what passes, so tests
 * can assert how many requests the gateway sent upstream (cache hits, coalescing).
 */
export async function startCountingProxy(targetUrl: string) {
  const target = new URL(targetUrl);
  const seen: Array<{ method: string; url: string }> = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url! });
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    count: (method: string, pathPrefix: string) => seen.filter((r) => r.method === method && r.url.startsWith(pathPrefix)).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
