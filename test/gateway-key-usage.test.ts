import { rmSync } from 'node:fs';
import { expectMatchesPortalContract } from './support/contract';
import { tempDir } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const NO_USAGE = { requests: 0, deprecatedCalls: 0, lastDeprecatedCallAt: null };

/**
 * Per-key usage through the real gateway: the authenticate step counts every request a key
 * authenticates and, once the route is matched, the calls to the deprecated GET /pets/{petId};
 * the portal API shows them before the 5 s flush (pending counts included) and after a restart.
 */
describe('per-key usage on the portal', () => {
  const dataDir = tempDir('asg-usage-');
  let gw: TestGateway;
  let dev: Developer;
  let petId: number;

  const call = (path: string, key?: string) => fetch(gw.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const listKeys = async () => {
    const res = await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } });
    expect(res.status).toBe(200);
    const body: Array<{ id: string; name: string; lastUsedAt: string | null; usage: unknown }> = await jsonOf(res);
    expectMatchesPortalContract('listApiKeys', 200, body);
    return body;
  };
  const keyById = async (id: string) => (await listKeys()).find((k) => k.id === id)!;

  beforeAll(async () => {
    gw = await startTestGateway({ env: { DATA_DIR: dataDir } });
    dev = await signUpDeveloper(gw.url);
    const created = await fetch(`${gw.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.productionKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Counted', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    petId = (await jsonOf(created)).id;
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when a key calls the deprecated GET /pets/{petId} twice and lists once, then the portal shows 3 requests and 2 deprecated calls at once', async () => {
    const { id, key } = await dev.issueKey({ name: 'legacy client' });
    expect(await keyById(id)).toMatchObject({ lastUsedAt: null, usage: NO_USAGE });

    // One instant for all three: usage times are taken at a key's first use in each flush
    // interval, and the 5 s flush may fall between any two calls.
    gw.clock.set('2026-11-22T10:00:00.000Z');
    expect((await call(`/v1/pets/${petId}`, key)).status).toBe(200);
    expect((await call(`/v1/pets/${petId}`, key)).status).toBe(200);
    expect((await call('/v1/pets', key)).status).toBe(200);
    gw.clock.reset();

    expect(await keyById(id)).toMatchObject({
      lastUsedAt: '2026-11-22T10:00:00.000Z',
      usage: { requests: 3, deprecatedCalls: 2, lastDeprecatedCallAt: '2026-11-22T10:00:00.000Z' },
    });
  });

  test('when requests are refused before or after authentication, then only those the key authenticated count', async () => {
    const { id, key } = await dev.issueKey({ name: 'refusals' });
    expect((await call(`/v1/pets/${petId}`)).status).toBe(401); // no key: nobody to count for
    expect((await call(`/staging/v1/pets/${petId}`, key)).status).toBe(401); // wrong environment: not authenticated
    expect((await call('/v1/pets/not-a-number', key)).status).toBe(400); // authenticated, then refused: still a call to the deprecated operation
    expect((await call('/v1/no-such-thing', key)).status).toBe(404); // authenticated, no operation matched
    expect((await keyById(id)).usage).toEqual({ requests: 2, deprecatedCalls: 1, lastDeprecatedCallAt: expect.any(String) });
  });

  test('when a staging key calls the deprecated operation, then it is counted for that key only', async () => {
    const created = await fetch(`${gw.url}/staging/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.stagingKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Sandbox', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const { id, key } = await dev.issueKey({ name: 'staging legacy', environment: 'staging' });
    expect((await call(`/staging/v1/pets/${(await jsonOf(created)).id}`, key)).status).toBe(200);
    const keys = await listKeys();
    expect(keys.find((k) => k.id === id)!.usage).toEqual({ requests: 1, deprecatedCalls: 1, lastDeprecatedCallAt: expect.any(String) });
    // The developer's first keys made one request each (the POSTs creating pets), none deprecated.
    expect(keys.find((k) => k.name === 'production key')!.usage).toEqual({ requests: 1, deprecatedCalls: 0, lastDeprecatedCallAt: null });
    expect(keys.find((k) => k.name === 'staging key')!.usage).toEqual({ requests: 1, deprecatedCalls: 0, lastDeprecatedCallAt: null });
  });

  test('when the gateway stops, then pending counts are written and a restarted gateway on the same data shows them', async () => {
    const { id, key } = await dev.issueKey({ name: 'across restart' });
    expect((await call(`/v1/pets/${petId}`, key)).status).toBe(200);
    expect((await call('/v1/pets', key)).status).toBe(200);
    await gw.stop(); // well before the 5 s flush: stop() must write what is pending
    gw = await startTestGateway({ env: { DATA_DIR: dataDir } });
    expect((await keyById(id)).usage).toEqual({ requests: 2, deprecatedCalls: 1, lastDeprecatedCallAt: expect.any(String) });
  });
});
