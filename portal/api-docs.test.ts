import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { API_DOCUMENT_PATH, loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../openapi/document';
import { createApiDocs } from './api-docs';
import { createPortalAssets } from './create-portal';

describe('Swagger UI routes', () => {
  let server: Server;
  let base: string;
  const get = (path: string) => fetch(base + path, { redirect: 'manual' });

  beforeAll(async () => {
    const app = express();
    app.use(
      createApiDocs({
        apiDocument: loadOpenApiDocument(API_DOCUMENT_PATH),
        portalDocument: loadOpenApiDocument(PORTAL_DOCUMENT_PATH),
        assets: createPortalAssets(),
      }),
    );
    app.use((_req, res) => void res.status(404).json({ code: 'not_found' }));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test('when /docs or /docs/portal is asked for without the slash, then it redirects to the page', async () => {
    for (const [from, to] of [
      ['/docs', '/docs/'],
      ['/docs/portal', '/docs/portal/'],
    ]) {
      const res = await get(from!);
      expect({ from, status: res.status, location: res.headers.get('location') }).toEqual({ from, status: 301, location: to });
    }
  });

  test('when each instance loads its swagger-ui-init.js, then it names only its own document and the agreed options', async () => {
    const api = await (await get('/docs/swagger-ui-init.js')).text();
    const portal = await (await get('/docs/portal/swagger-ui-init.js')).text();
    expect(api).toContain('"url": "/openapi.json"');
    expect(api).not.toContain('/portal/openapi.json');
    expect(portal).toContain('"url": "/portal/openapi.json"');
    for (const init of [api, portal]) {
      expect(init).toContain('"tryItOutEnabled": true');
      expect(init).toContain('"displayRequestDuration": true');
      expect(init).toContain('"deepLinking": true');
      expect(init).toContain('"requestSnippetsEnabled": true');
      expect(init).toContain('"persistAuthorization": false');
      expect(init).toContain('"validatorUrl": null');
    }
  });

  test('when a docs page is served, then its scripts load in order from the gateway: bundle, portal plugin, init, code samples, explorer hand-off', async () => {
    const page = await (await get('/docs/')).text();
    const scripts = [...page.matchAll(/<script src="([^"?]+)[^"]*" defer><\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([
      '/portal/assets/portal.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui-standalone-preset.js',
      '/portal/assets/docs-swagger-plugin.js',
      '/docs/swagger-ui-init.js',
      '/portal/assets/code-samples.js',
      '/portal/assets/docs-explorer.js',
    ]);
    const portalPage = await (await get('/docs/portal/')).text();
    expect(portalPage).toContain('<script src="/docs/portal/swagger-ui-init.js" defer>');
    expect(portalPage).not.toContain('docs-explorer.js');
  });

  test('when a page links swagger-ui-dist files, then the links carry the package version and that version is cached for a year', async () => {
    const page = await (await get('/docs/')).text();
    const css = /href="(\/docs\/swagger-ui\.css\?v=[0-9.]+)"/.exec(page)?.[1];
    expect(css).toBeDefined();
    expect((await get(css!)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await get('/docs/swagger-ui.css')).headers.get('cache-control')).toBe('public, max-age=0');
  });

  test('when swagger-ui-dist files are asked for, then only the ones a page needs are served', async () => {
    for (const path of ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/portal/swagger-ui-standalone-preset.js']) {
      expect({ path, status: (await get(path)).status }).toEqual({ path, status: 200 });
    }
    for (const path of ['/docs/index.html', '/docs/swagger-initializer.js', '/docs/package.json', '/docs/oauth2-redirect.html', '/docs/portal/index.html', '/docs/x/swagger-ui-init.js']) {
      expect({ path, status: (await get(path)).status }).toEqual({ path, status: 404 });
    }
  });

  test('when the portal API document is asked for, then it is the portal document as JSON and YAML', async () => {
    const json = await get('/portal/openapi.json');
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await json.json()) as { info: { title: string } }).info.title).toBe('Animal Store Developer Portal API');
    expect(await (await get('/portal/openapi.yaml')).text()).toContain('title: Animal Store Developer Portal API');
  });
});
