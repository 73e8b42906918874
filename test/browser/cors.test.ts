import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { launchChromium, newContext, watchConsole } from './support/browser';

/** A bare page on its own origin, standing in for a developer's web app. */
async function startSite(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><p>app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const close = (server?: Server) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

/**
 * CORS on /v1 and /staging/v1, the session cookie and the CSP, seen from a real browser: pages
 * from PUBLIC_URL may call the API and read its headers; pages from anywhere else may not.
 */
describe('browser security of the API prefixes and the portal (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let allowedSite: { origin: string; server: Server };
  let otherSite: { origin: string; server: Server };
  let developer: Developer;
  let petId: number;

  beforeAll(async () => {
    [allowedSite, otherSite, browser] = await Promise.all([startSite(), startSite(), launchChromium()]);
    gw = await startTestGateway({ env: { PUBLIC_URL: allowedSite.origin } });
    developer = await signUpDeveloper(gw.url);
    const created = await fetch(`${gw.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${developer.productionKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    petId = ((await created.json()) as { id: number }).id;
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await Promise.all([close(allowedSite?.server), close(otherSite?.server)]);
  });

  async function pageOn(origin: string): Promise<{ page: Page; problems: string[]; done: () => Promise<void> }> {
    const context = await newContext(browser, origin);
    const page = await context.newPage();
    const { problems } = watchConsole(page);
    await page.goto(origin + '/');
    return { page, problems, done: () => context.close() };
  }

  test('when a page from PUBLIC_URL calls the API with a key, then it gets the answer and can read the deprecation and request headers', async () => {
    const { page, problems, done } = await pageOn(allowedSite.origin);
    try {
      const result = await page.evaluate(
        async ({ api, key, id }) => {
          const headers = { Authorization: `Bearer ${key}` };
          const pet = await fetch(`${api}/v1/pets/${id}`, { headers });
          const message = await fetch(`${api}/v1/messages`, {
            method: 'POST',
            headers: { ...headers, 'Content-Type': 'application/json', 'X-Request-Id': 'from-the-browser-1' },
            body: JSON.stringify({ message: 'hello' }),
          });
          const pick = (r: Response, names: string[]) => Object.fromEntries(names.map((n) => [n, r.headers.get(n)]));
          return {
            pet: { status: pet.status, ...pick(pet, ['deprecation', 'sunset', 'link', 'ratelimit', 'ratelimit-policy']) },
            message: { status: message.status, ...pick(message, ['x-request-id']), body: await message.json() },
          };
        },
        { api: gw.url, key: developer.productionKey, id: petId },
      );
      expect(result.pet).toEqual({
        status: 200,
        deprecation: '@1764892800',
        sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
        link: `<${allowedSite.origin}/portal/deprecations>; rel="deprecation"; type="text/html"`,
        ratelimit: expect.any(String),
        'ratelimit-policy': expect.any(String),
      });
      expect(result.message).toEqual({ status: 202, 'x-request-id': 'from-the-browser-1', body: expect.objectContaining({ status: 'queued' }) });
      expect(problems).toEqual([]);
    } finally {
      await done();
    }
  });

  test('when a page from PUBLIC_URL sends cookies along, then the browser refuses: the API never accepts credentials', async () => {
    const { page, done } = await pageOn(allowedSite.origin);
    try {
      const outcome = await page.evaluate(async (api) => {
        try {
          await fetch(`${api}/v1/pets`, { credentials: 'include' });
          return 'answered';
        } catch {
          return 'refused';
        }
      }, gw.url);
      expect(outcome).toBe('refused');
    } finally {
      await done();
    }
  });

  test('when a page from any other origin calls the API, then the browser refuses, with or without a key', async () => {
    const { page, done } = await pageOn(otherSite.origin);
    try {
      const outcome = await page.evaluate(
        async ({ api, key }) => {
          const attempt = async (init: RequestInit) => {
            try {
              await fetch(`${api}/v1/pets`, init);
              return 'answered';
            } catch {
              return 'refused';
            }
          };
          return { simple: await attempt({}), withKey: await attempt({ headers: { Authorization: `Bearer ${key}` } }) };
        },
        { api: gw.url, key: developer.productionKey },
      );
      expect(outcome).toEqual({ simple: 'refused', withKey: 'refused' });
    } finally {
      await done();
    }
  });

  test('when a preflight arrives without a key, then an allowed origin gets 204 with the allowed headers and another gets 403', async () => {
    const preflight = (origin: string, headers = 'authorization,content-type') =>
      fetch(`${gw.url}/staging/v1/pets`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
      });
    const ok = await preflight(allowedSite.origin);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowedSite.origin);
    expect(ok.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, X-Request-Id');
    expect(ok.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST');
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
    expect(ok.headers.get('vary')).toContain('Origin');

    const other = await preflight(otherSite.origin);
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(await other.json()).toEqual({ code: 'forbidden', message: `Browser requests from ${otherSite.origin} are not allowed.`, status: 403 });

    const strayHeader = await preflight(allowedSite.origin, 'authorization,x-debug');
    expect(strayHeader.status).toBe(403);
  });

  test('when the portal and docs pages are served, then their CSP forbids inline scripts and they contain none', async () => {
    for (const path of ['/portal/', '/portal/login', '/portal/signup', '/portal/deprecations', '/docs/', '/docs/portal/']) {
      const res = await fetch(gw.url + path);
      const csp = res.headers.get('content-security-policy') ?? '';
      const scriptSrc = /script-src ([^;]*)/.exec(csp)?.[1];
      expect({ path, scriptSrc }).toEqual({ path, scriptSrc: "'self'" });
      expect(csp).toContain("script-src-attr 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await res.text();
      expect({ path, inlineScripts: html.match(/<script(?![^>]*\bsrc=)[^>]*>/g) ?? [] }).toEqual({ path, inlineScripts: [] });
      expect({ path, inlineStyles: html.match(/<style|\sstyle=|\son[a-z]+=/g) ?? [] }).toEqual({ path, inlineStyles: [] });
    }
    // The API prefixes carry no CSP or helmet headers: programs read them, not browsers.
    const api = await fetch(`${gw.url}/v1/pets`);
    expect(api.headers.get('content-security-policy')).toBeNull();
  });

  test('when a page from another origin posts to the portal API with the session cookie, then the change is refused', async () => {
    const res = await fetch(`${gw.url}/portal/api/keys`, {
      method: 'POST',
      headers: { origin: otherSite.origin, cookie: developer.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'stolen' }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('forbidden');
  });

  test('when PUBLIC_URL is https, then the session cookie is Secure, HSTS is on and the CSP upgrades requests', async () => {
    const secure = await startTestGateway({ env: { PUBLIC_URL: 'https://developers.example.test' } });
    try {
      const signup = await fetch(`${secure.url}/portal/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: secure.url },
        body: JSON.stringify({ email: `secure-${Date.now()}@example.com`, password: 'correct horse battery staple' }),
      });
      expect(signup.status).toBe(201);
      const cookie = signup.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
      const page = await fetch(`${secure.url}/portal/`);
      expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect(page.headers.get('content-security-policy')).toContain('upgrade-insecure-requests');
      const landing = await page.text();
      expect(landing).toContain('https://developers.example.test/v1/pets');
      expect(landing).toContain('https://developers.example.test/staging/v1');
    } finally {
      await secure.stop();
    }
    // Over plain http neither applies, and the cookie is not Secure (the browser would drop it).
    const plain = await fetch(`${gw.url}/portal/`);
    expect(plain.headers.get('strict-transport-security')).toBeNull();
    expect(plain.headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
  });
});
