import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_DOCUMENT_PATH, loadOpenApiDocument, type OpenApiDocument } from '../openapi/document';
import { tempDir } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const SHIPPED = readFileSync(API_DOCUMENT_PATH, 'utf8');

/** The shipped document with some lines replaced, loaded as the gateway loads it; each replaced line must exist exactly once. */
function variantOf(replacements: Array<[string, string]>): { document: OpenApiDocument; changedLines: number } {
  let text = SHIPPED;
  for (const [line, replacement] of replacements) {
    expect(text.split('\n').filter((l) => l === line)).toHaveLength(1);
    text = text.replace(`${line}\n`, `${replacement}\n`);
  }
  const before = SHIPPED.split('\n');
  const changedLines = text.split('\n').filter((l, i) => l !== before[i]).length;
  const dir = tempDir('asg-contract-');
  try {
    const path = join(dir, 'animal-store.yaml');
    writeFileSync(path, text);
    return { document: loadOpenApiDocument(path), changedLines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function create(gw: TestGateway, prefix: string, key: string): Promise<number> {
  const res = await fetch(`${gw.url}${prefix}/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Old API', categoryId: 1 }),
  });
  expect(res.status).toBe(201);
  return (await jsonOf(res)).id as number;
}

describe('when the sunset in the OpenAPI document is moved (one line), then headers, 410, pages, badges and the served document follow', () => {
  const SUNSET = 'Sat, 15 Mar 2031 12:00:00 GMT';
  let gw: TestGateway;
  let dev: Developer;
  let petId: number;
  const page = async (path: string, cookie?: string) => {
    const res = await fetch(gw.url + path, { headers: cookie ? { cookie } : {} });
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    const variant = variantOf([["      x-sunset: '2030-12-05T00:00:00Z'", "      x-sunset: '2031-03-15T12:00:00Z'"]]);
    expect(variant.changedLines).toBe(1);
    gw = await startTestGateway({ env: { PUBLIC_URL: 'https://api.example.test' }, apiDocument: variant.document });
    dev = await signUpDeveloper(gw.url);
    petId = await create(gw, '/v1', dev.productionKey);
  });
  afterAll(() => gw?.stop());
  afterEach(() => gw.clock.reset());

  const getPet = () => fetch(`${gw.url}/v1/pets/${petId}`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
  const expectHeaders = (res: Response) => {
    expect(res.headers.get('deprecation')).toBe('@1764892800');
    expect(res.headers.get('sunset')).toBe(SUNSET);
    expect(res.headers.get('link')).toBe('<https://api.example.test/portal/deprecations>; rel="deprecation"; type="text/html"');
  };

  test('when a pet is fetched before the new sunset (and after the old one), then it answers with the new Sunset header', async () => {
    gw.clock.set('2031-03-15T11:59:59Z');
    const res = await getPet();
    expect(res.status).toBe(200);
    expectHeaders(res);
  });

  test('when the new sunset has passed, then 410 gone names the new instant', async () => {
    gw.clock.set('2031-03-15T12:00:00Z');
    const res = await getPet();
    expect(res.status).toBe(410);
    expectHeaders(res);
    expect(await jsonOf(res)).toEqual({
      code: 'gone',
      message: `GET /v1/pets/{petId} was removed on ${SUNSET}; see the deprecation notice in the Link header for its replacement.`,
      status: 410,
    });
  });

  test('when the portal pages are opened, then the deprecations page, the landing page and the keys page give the new date', async () => {
    const deprecations = await page('/portal/deprecations');
    expect(deprecations).toContain('<td data-label="Removed on"><time datetime="2031-03-15T12:00:00Z">15 March 2031</time></td>');
    expect(deprecations).toContain('— removed on 15 March 2031</h2>');
    expect(deprecations).toContain('<strong>15 March 2031 at 12:00 UTC</strong>');
    expect(deprecations).toContain(`Sunset: ${SUNSET}`);
    expect(deprecations).not.toContain('2030');

    expect(await page('/portal/')).toContain('<code>GET /pets/{petId}</code> is removed on 15 March 2031.');
    expect(await page('/portal/keys', dev.cookie)).toContain('data-sunset="2031-03-15T12:00:00Z" data-sunset-text="15 March 2031"');
  });

  test('when the docs are opened, then the badge and the served document give the new date', async () => {
    const docs = await page('/docs/');
    const badges = /href="([^"]*docs-api-badges\.css[^"]*)"/.exec(docs)?.[1];
    expect(badges).toBeDefined();
    expect(await page(badges!)).toMatch(/#operations-Pets-getPet \.opblock-summary-path__deprecated::after \{\s*content: "Deprecated · removed 15 Mar 2031";/);

    const served = (await jsonOf(await fetch(`${gw.url}/openapi.json`))) as OpenApiDocument;
    const description = (served.paths['/pets/{petId}']!.get as { description: string }).description;
    expect(description).toContain(`**Deprecated since 5 December 2025; removed on 15 March 2031** (\`Sunset: ${SUNSET}\`).`);
    expect(served.info.description).toContain('`GET /pets/{petId}` is deprecated and will be removed on 15 March 2031');
    expect(JSON.stringify(served)).not.toContain('December 2030');
  });
});

describe('when the servers in the OpenAPI document move, then the API, its Location headers and the pages follow', () => {
  let gw: TestGateway;
  let dev: Developer;

  beforeAll(async () => {
    const variant = variantOf([
      ['  - url: /v1', '  - url: /live/v1'],
      ['  - url: /staging/v1', '  - url: /sandbox/v1'],
    ]);
    gw = await startTestGateway({ env: { PUBLIC_URL: 'https://api.example.test' }, apiDocument: variant.document });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(() => gw?.stop());

  test('when pets are created and listed under the new prefixes, then each environment answers there and not under the old ones', async () => {
    const created = await fetch(`${gw.url}/sandbox/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.stagingKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Moved', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/sandbox/v1/pets/${(await jsonOf(created)).id}`);
    expect((await fetch(`${gw.url}/live/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } })).status).toBe(200);

    const old = await fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
    expect(old.status).toBe(404);
    expect(await jsonOf(old)).toMatchObject({ code: 'not_found', status: 404 });
  });

  test('when a production key is used under the staging prefix, then the 401 names the new prefixes', async () => {
    const res = await fetch(`${gw.url}/sandbox/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
    expect(res.status).toBe(401);
    expect(await jsonOf(res)).toEqual({
      code: 'unauthorized',
      message: 'This API key belongs to another environment: production keys work under /live/v1, staging keys under /sandbox/v1.',
      status: 401,
    });
  });

  test('when the portal pages are opened, then they show the new base URLs', async () => {
    const landing = await (await fetch(`${gw.url}/portal/`)).text();
    expect(landing).toContain('<code class="url">https://api.example.test/live/v1</code>');
    expect(landing).toContain('<code class="url">https://api.example.test/sandbox/v1</code>');
    const keys = await (await fetch(`${gw.url}/portal/keys`, { headers: { cookie: dev.cookie } })).text();
    expect(keys).toContain('data-prefix-production="/live/v1" data-prefix-staging="/sandbox/v1"');
    const docs = await (await fetch(`${gw.url}/docs/`)).text();
    expect(docs).toContain('Production (<code>/live/v1</code>) or Staging (<code>/sandbox/v1</code>)');
  });
});
