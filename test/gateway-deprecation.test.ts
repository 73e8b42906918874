import { expectMatchesContract } from './support/contract';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';
const DEPRECATION = '@1764892800'; // 2025-12-05T00:00:00Z

describe('deprecation of GET /pets/{petId}', () => {
  let gw: TestGateway;
  let dev: Developer;
  let prodPet: number;
  let stagingPet: number;

  beforeAll(async () => {
    gw = await startTestGateway({ env: { PUBLIC_URL: 'https://api.example.test' } });
    dev = await signUpDeveloper(gw.url);
    const create = async (prefix: string, key: string) =>
      (
        await jsonOf(
          await fetch(`${gw.url}${prefix}/pets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Old API', categoryId: 1 }),
          }),
        )
      ).id as number;
    prodPet = await create('/v1', dev.productionKey);
    stagingPet = await create('/staging/v1', dev.stagingKey);
  });
  afterAll(() => gw?.stop());
  afterEach(() => gw.clock.reset());

  const get = (path: string, key?: string) => fetch(gw.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  const expectDeprecationHeaders = (res: Response) => {
    expect(res.headers.get('deprecation')).toBe(DEPRECATION);
    expect(res.headers.get('sunset')).toBe(SUNSET);
    expect(res.headers.get('link')).toBe('<https://api.example.test/portal/deprecations>; rel="deprecation"; type="text/html"');
  };

  test('when a pet is fetched in either environment, then Deprecation, Sunset and Link rel="deprecation" are on the response', async () => {
    const prod = await get(`/v1/pets/${prodPet}`, dev.productionKey);
    expect(prod.status).toBe(200);
    expectDeprecationHeaders(prod);
    const staging = await get(`/staging/v1/pets/${stagingPet}`, dev.stagingKey);
    expect(staging.status).toBe(200);
    expectDeprecationHeaders(staging);
  });

  test('when the deprecated operation fails (404, 400, 401), then the headers are still there', async () => {
    const notFound = await get('/v1/pets/987654', dev.productionKey);
    expect(notFound.status).toBe(404);
    expectDeprecationHeaders(notFound);
    const bad = await get('/v1/pets/abc', dev.productionKey);
    expect(bad.status).toBe(400);
    expectDeprecationHeaders(bad);
    const anonymous = await get(`/v1/pets/${prodPet}`);
    expect(anonymous.status).toBe(401);
    expectDeprecationHeaders(anonymous);
  });

  test('when the Link rel="deprecation" target is opened, then it explains the removal date and the replacement', async () => {
    const page = await fetch(`${gw.url}/portal/deprecations`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('5 December 2030');
    expect(html).toContain('GET /pets</code> with a <code>status</code> filter');
  });

  test('when other operations answer, then they carry no deprecation headers', async () => {
    const list = await get('/v1/pets', dev.productionKey);
    expect(list.status).toBe(200);
    expect(list.headers.get('deprecation')).toBeNull();
    expect(list.headers.get('sunset')).toBeNull();
  });

  test('when the clock is one second before the sunset, then the operation still answers', async () => {
    gw.clock.set('2030-12-04T23:59:59Z');
    expect((await get(`/v1/pets/${prodPet}`, dev.productionKey)).status).toBe(200);
  });

  test('when the sunset instant has passed, then 410 gone with the same headers, in both environments, and the list still works', async () => {
    gw.clock.set('2030-12-05T00:00:00Z');
    for (const [path, key] of [
      [`/v1/pets/${prodPet}`, dev.productionKey],
      [`/staging/v1/pets/${stagingPet}`, dev.stagingKey],
    ] as const) {
      const res = await get(path, key);
      expect(res.status).toBe(410);
      expectDeprecationHeaders(res);
      const prefix = path.startsWith('/staging') ? '/staging/v1' : '/v1';
      const body = await jsonOf(res);
      expectMatchesContract('getPet', 410, body);
      expect(body).toEqual({
        code: 'gone',
        message: `GET ${prefix}/pets/{petId} was removed on ${SUNSET}; see the deprecation notice in the Link header for its replacement.`,
        status: 410,
      });
    }
    expect((await get('/v1/pets?status=available', dev.productionKey)).status).toBe(200);
  });
});
