import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A transparent HTTP forwarder in front of a real upstream that counts the connections and
 * requests the gateway makes, and can hold requests (to keep a probe in flight on purpose).
 * When the upstream cannot be reached it drops the gateway's connection, so the gateway sees
 * the same broken connection it would see without the forwarder.
 */
export async function startGatedProxy(targetUrl: string) {
  const target = new URL(targetUrl);
  const agent = new Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  const requests: Array<{ method: string; url: string }> = [];
  let connections = 0;
  let held: Array<() => void> | undefined;

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (res.destroyed) return;
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      upstreamRes.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.once('close', () => upstream.destroy()); // the gateway gave up (timeout): so do we
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url! });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const go = () => forward(req, res, Buffer.concat(chunks));
      if (held) held.push(go);
      else go();
    });
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    /** Requests the gateway sent, in arrival order. */
    requests,
    /** TCP connections the gateway opened. */
    connections: () => connections,
    /** Requests from now on wait until `release`. */
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const go of waiting) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
