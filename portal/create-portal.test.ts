import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { loadOpenApiDocument } from '../openapi/document';
import { environmentPrefixes } from '../openapi/environments';
import { compileOperations } from '../openapi/operations';
import { createPortal, createPortalAssets } from './create-portal';

const SESSION = { sessionId: 's1', accountId: 7, expiresAt: new Date('2030-01-01T00:00:00Z') };

describe('portal pages', () => {
  let server: Server;
  let base: string;
  let email = 'ada@example.com';
  const get = (path: string, cookie?: string) => fetch(base + path, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const signedIn = 'asg_session=valid';

  beforeAll(async () => {
    const document = loadOpenApiDocument();
    const app = express();
    app.use(
      createPortal({
        publicUrl: 'https://developers.example.test',
        sessions: { resolve: async (token: string) => (token === 'valid' ? SESSION : null) },
        accounts: { get: async (id: number) => (id === 7 ? { id, email, createdAt: new Date() } : null) },
        assets: createPortalAssets(),
        operations: compileOperations(document),
        prefixes: environmentPrefixes(document),
      }),
    );
    app.use((_req, res) => void res.status(404).end());
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test('when the site root is opened, then it redirects (302) to the portal', async () => {
    const res = await get('/');
    expect([res.status, res.headers.get('location')]).toEqual([302, '/portal/']);
  });

  test('when /portal is opened, then it redirects to /portal/', async () => {
    const res = await get('/portal');
    expect([res.status, res.headers.get('location')]).toEqual([301, '/portal/']);
  });

  test('when the landing page is opened, then it shows the quickstart with this deployment\'s base URLs', async () => {
    const res = await get('/portal/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await res.text();
    expect(page).toContain('https://developers.example.test/v1/pets?status=available&amp;limit=20');
    expect(page).toContain('https://developers.example.test/staging/v1');
    expect(page).toContain('"status": "queued"');
    expect(page).toContain('What &quot;queued&quot; means');
    expect(page).toContain('href="/portal/signup"');
    expect(page).toContain('href="/portal/login"');
    expect(page).toContain('href="/docs/"');
  });

  test('when a signed-out visitor opens the keys page, then they are sent to log in and back', async () => {
    for (const cookie of [undefined, 'asg_session=forged']) {
      const res = await get('/portal/keys', cookie);
      expect([res.status, res.headers.get('location'), res.headers.get('cache-control')]).toEqual([303, '/portal/login?next=%2Fportal%2Fkeys', 'no-store']);
    }
  });

  test('when a signed-in account opens the keys page, then it is greeted by its (escaped) email and the page is not stored', async () => {
    email = 'o"brien<x>@example.com';
    const res = await get('/portal/keys', signedIn);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = await res.text();
    expect(page).toContain('Signed in as <strong>o&quot;brien&lt;x&gt;@example.com</strong>');
    expect(page).not.toContain('<x>');
    expect(page).toContain('data-action="logout"');
    email = 'ada@example.com';
  });

  test('when a signed-in account opens log in or sign up, then it goes where it was heading instead', async () => {
    const login = await get('/portal/login?next=%2Fdocs%2F', signedIn);
    expect([login.status, login.headers.get('location')]).toEqual([303, '/docs/']);
    const signup = await get('/portal/signup?next=https%3A%2F%2Fevil.example', signedIn);
    expect([signup.status, signup.headers.get('location')]).toEqual([303, '/portal/keys']);
  });

  test('when the deprecations page is opened, then it gives the removal date and the replacement', async () => {
    const page = await (await get('/portal/deprecations')).text();
    expect(page).toContain('<time datetime="2030-12-05T00:00:00Z">5 December 2030</time>');
    expect(page).toContain('Use <code>GET /pets</code> with a <code>status</code> filter');
    expect(page).toContain('Link: &lt;https://developers.example.test/portal/deprecations&gt;; rel=&quot;deprecation&quot;');
  });

  test('when a page is rendered, then its assets are versioned and served', async () => {
    const page = await (await get('/portal/login')).text();
    const css = /href="(\/portal\/assets\/portal\.css\?v=[0-9a-f]+)"/.exec(page)?.[1];
    expect(css).toBeDefined();
    expect((await get(css!)).status).toBe(200);
    expect(page).toMatch(/<script src="\/portal\/assets\/auth\.js\?v=[0-9a-f]+" defer><\/script>/);
  });
});
