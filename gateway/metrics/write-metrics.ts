import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

/** One scrape: the registry's text exposition, never cached by anything in between. */
export async function writeMetrics(res: ServerResponse, registry: Registry): Promise<void> {
  const body = await registry.metrics();
  res.statusCode = 200;
  res.setHeader('Content-Type', registry.contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}
