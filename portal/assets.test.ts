import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createAssets, type Assets } from './assets';

describe('portal assets', () => {
  let dir: string;
  let assets: Assets;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asg-assets-'));
    writeFileSync(join(dir, 'site.css'), 'body{color:red}');
    writeFileSync(join(dir, 'notes.txt'), 'not served');
    assets = createAssets({ dir, mountPath: '/portal/assets' });
    assets.add('generated.css', '.x{}');
    const app = express();
    app.use(assets.handler);
    app.use((_req, res) => void res.status(404).end('fell through'));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test('when a page links an asset, then the URL carries its content hash and that version is cached for a year', async () => {
    const url = assets.url('site.css');
    expect(url).toMatch(/^\/portal\/assets\/site\.css\?v=[0-9a-f]{12}$/);
    const res = await fetch(base + url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('body{color:red}');
  });

  test('when an asset is asked for without its current version, then it must be revalidated, and its ETag answers 304', async () => {
    const res = await fetch(`${base}/portal/assets/site.css?v=old`);
    expect(res.headers.get('cache-control')).toBe('public, no-cache');
    const again = await fetch(`${base}/portal/assets/site.css`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  test('when an asset is generated at start-up, then it is served like a file', async () => {
    expect(await (await fetch(base + assets.url('generated.css'))).text()).toBe('.x{}');
  });

  test('when the name is unknown, has no served type, or tries to leave the folder, then the request falls through', async () => {
    for (const path of ['/portal/assets/missing.css', '/portal/assets/notes.txt', '/portal/assets/..%2Fassets.ts', '/portal/assets/']) {
      const res = await fetch(base + path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect(() => assets.url('missing.css')).toThrow('Unknown portal asset: missing.css');
    const post = await fetch(base + assets.url('site.css'), { method: 'POST' });
    expect(post.status).toBe(404);
  });
});
