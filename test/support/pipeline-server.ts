import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFrontHandler, type ApiMount } from '../../gateway/http/front-handler';

/**
 * Steps under test, composed into a pipeline and mounted as the gateway mounts it (its front
 * handler builds each request's context), on a real HTTP server on loopback. Anything outside
 * the mount is a bare 404.
 */
export async function servePipeline(mount: ApiMount): Promise<{ url: (path: string) => string; close: () => Promise<void> }> {
  const server: Server = createServer(createFrontHandler([mount], (_req, res) => res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${mount.prefix}`;
  return {
    url: (path) => base + path,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
