import { expectMatchesContract } from './support/contract';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

/** Every way a request can lack a valid key gets 401 with an Error body, before anything else. */
describe('bearer authentication at the gateway', () => {
  let gw: TestGateway;
  let dev: Developer;

  beforeAll(async () => {
    gw = await startTestGateway();
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(() => gw?.stop());

  const expect401 = async (res: Response, message: string) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store"/);
    const body = await jsonOf(res);
    expect(body).toEqual({ code: 'unauthorized', message, status: 401 });
    expectMatchesContract('listPets', 401, body);
  };
  const list = (authorization?: string, path = '/v1/pets') => fetch(gw.url + path, { headers: authorization === undefined ? {} : { authorization } });

  test.each([
    ['no Authorization header', undefined, 'Missing API key: send "Authorization: Bearer <API_KEY>".'],
    ['a Basic header', 'Basic dXNlcjpwYXNz', 'The Authorization header must have the form "Bearer <API_KEY>".'],
    ['the bare scheme', 'Bearer', 'The Authorization header must have the form "Bearer <API_KEY>".'],
    ['an empty token', 'Bearer ', 'The Authorization header must have the form "Bearer <API_KEY>".'],
    ['two tokens', 'Bearer a b', 'The Authorization header must have the form "Bearer <API_KEY>".'],
    ['an unknown well-formed key', `Bearer asg_prod_${'A'.repeat(43)}`, 'Invalid API key.'],
    ['garbage', 'Bearer not-a-key', 'Invalid API key.'],
  ])('when the request carries %s, then 401', async (_what, header, message) => {
    await expect401(await list(header), message);
  });

  test('when the scheme is written in another case, then the key is still accepted', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) expect((await list(`${scheme} ${dev.productionKey}`)).status).toBe(200);
  });

  test('when a production key is used on staging (or the reverse), then 401', async () => {
    const message = 'This API key belongs to another environment: production keys work under /v1, staging keys under /staging/v1.';
    await expect401(await list(`Bearer ${dev.productionKey}`, '/staging/v1/pets'), message);
    await expect401(await list(`Bearer ${dev.stagingKey}`, '/v1/pets'), message);
    expect((await list(`Bearer ${dev.stagingKey}`, '/staging/v1/pets')).status).toBe(200);
  });

  test('when a key is revoked in the portal, then the gateway refuses it within one second', async () => {
    const { id, key } = await dev.issueKey({ name: 'short-lived' });
    expect((await list(`Bearer ${key}`)).status).toBe(200); // now cached by the gateway
    await dev.revoke(id);
    const deadline = Date.now() + 1000;
    let res = await list(`Bearer ${key}`);
    while (res.status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      res = await list(`Bearer ${key}`);
    }
    await expect401(res, 'This API key has been revoked.');
  });

  test('when a key has expired, then 401', async () => {
    const { key } = await dev.issueKey({ name: 'expiring', expiresInDays: 1 });
    expect((await list(`Bearer ${key}`)).status).toBe(200);
    gw.clock.set(new Date(Date.now() + 2 * 86_400_000));
    try {
      await expect401(await list(`Bearer ${key}`), 'This API key has expired.');
    } finally {
      gw.clock.reset();
    }
  });

  test('when a request is both unauthenticated and invalid, then 401 wins over 400', async () => {
    await expect401(await list(undefined, '/v1/pets?limit=0'), 'Missing API key: send "Authorization: Bearer <API_KEY>".');
    const res = await fetch(`${gw.url}/v1/pets`, { method: 'POST', body: 'not json' });
    expect(res.status).toBe(401);
  });

  test('when an unknown path is called without a key, then 401 (paths are not probed anonymously)', async () => {
    expect((await list(undefined, '/v1/nothing-here')).status).toBe(401);
  });
});
