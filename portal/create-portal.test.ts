import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { loadOpenApiDocument } from '../openapi/document';
import { environmentPrefixes } from '../openapi/environments';
import { compileOperations } from '../openapi/operations';
import type { KeySummary } from '../identity/api-key-service';
import type { UsageDay } from '../identity/daily-usage';
import { createPortal, createPortalAssets } from './create-portal';

const SESSION = { sessionId: 's1', accountId: 7, expiresAt: new Date('2030-01-01T00:00:00Z') };
/** Account 7's one key, its name written to be escaped. */
const KEY = { id: 'key_AAAAAAAAAAAAAAAA', name: 'CI <pipeline> & "tests"', prefix: 'asg_prod_Xk29fQ', environment: 'production' } as KeySummary;
/** `days` days up to 2026-11-25, the last with `today`'s counts. */
const daysUpTo = (days: number, today: Partial<UsageDay>): UsageDay[] =>
  Array.from({ length: days }, (_, i) => ({
    day: new Date(Date.UTC(2026, 10, 25 - (days - 1 - i))).toISOString().slice(0, 10),
    ok: 0,
    clientErrors: 0,
    rateLimited: 0,
    serverErrors: 0,
    ...(i === days - 1 ? today : {}),
  }));

describe('portal pages', () => {
  let server: Server;
  let base: string;
  let email = 'ada@example.com';
  const get = (path: string, cookie?: string) => fetch(base + path, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const signedIn = 'asg_session=valid';
  let usageReads: unknown[] = [];

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
        usage: {
          dailyUsage: {
            forAccount: async (accountId, days) => {
              usageReads.push(['account', accountId, days]);
              return daysUpTo(days, { ok: 1200, clientErrors: 4 });
            },
            forKey: async (accountId, keyId, days) => {
              usageReads.push(['key', accountId, keyId, days]);
              return daysUpTo(days, { ok: 9, serverErrors: 1 });
            },
          },
          apiKeys: { list: async (accountId) => (accountId === 7 ? [KEY] : []) },
        },
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

  test("when a signed-in account opens the keys page, then it shows the account's last 30 days: summary, chart named by it, table twin", async () => {
    usageReads = [];
    const page = await (await get('/portal/keys', signedIn)).text();
    expect(usageReads).toEqual([['account', 7, 30]]);
    expect(page).toContain('<h2 id="usage-title" tabindex="-1">Usage of all your keys</h2>');
    expect(page).toContain('<p class="usage-summary" data-usage-summary>1,204 requests in the last 7 days, under 1% errors.</p>');
    expect(page).toContain('Errors are responses with a 4xx or 5xx status, 429 (rate limited) included.');
    expect(page).toMatch(/<svg [^>]*role="img" aria-labelledby="usage-chart-title"/);
    expect(page).toContain('<title id="usage-chart-title">1,204 requests in the last 7 days, under 1% errors. Requests per day, all your keys, last 30 days, by status.</title>');
    expect(page).toContain('<caption id="usage-table-caption">Requests per day, all your keys, 27 October 2026 to 25 November 2026 (UTC); 4xx excludes 429</caption>');
    expect(page).toContain('<tr><th scope="row"><time datetime="2026-11-25">25 Nov</time></th><td>1,200</td><td>4</td><td>0</td><td>0</td><td>1,204</td></tr>');
    expect(page).toContain('<tfoot><tr><th scope="row">30 days</th><td>1,200</td><td>4</td><td>0</td><td>0</td><td>1,204</td></tr></tfoot>');
    expect(page).toMatch(/<link rel="stylesheet" href="\/portal\/assets\/usage\.css\?v=[0-9a-f]{12}">/);
    expect(page).toMatch(/<script src="\/portal\/assets\/usage-chart\.js\?v=[0-9a-f]{12}" defer><\/script>/);
    expect(page).not.toContain('Show all keys');
  });

  test('when the keys page names one of the account\'s keys, then the section shows that key, its name escaped, with a way back to all keys', async () => {
    usageReads = [];
    const page = await (await get(`/portal/keys?usage=${KEY.id}`, signedIn)).text();
    expect(usageReads).toEqual([['key', 7, KEY.id, 30]]);
    expect(page).toContain('Usage of “CI &lt;pipeline&gt; &amp; &quot;tests&quot;”</h2>');
    expect(page).toContain('<a class="button button-small" href="/portal/keys#usage" data-usage-link>Show all keys</a>');
    expect(page).toContain('Key <code>asg_prod_Xk29fQ…</code> (production).');
    expect(page).toContain('10 requests in the last 7 days, 10% errors.');
    expect(page).toContain('key “CI &lt;pipeline&gt; &amp; &quot;tests&quot;”, last 30 days, by status.</title>');
    expect(page).not.toContain('<pipeline>');
  });

  test('when the keys page names a key the account does not own, or names it twice, then it shows all keys and says why', async () => {
    for (const query of ['usage=key_BBBBBBBBBBBBBBBB', `usage=${KEY.id}&usage=${KEY.id}`, 'usage=']) {
      usageReads = [];
      const page = await (await get(`/portal/keys?${query}`, signedIn)).text();
      expect(usageReads).toEqual([['account', 7, 30]]);
      expect(page).toContain('Usage of all your keys');
      expect(page).toContain('<p class="callout callout-warning" role="alert">Your account has no key with that id; here are all your keys.</p>');
    }
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
