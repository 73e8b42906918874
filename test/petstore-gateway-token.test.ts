import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database';
import { loadOpenApiDocument } from '../openapi/document';
import { compileOperations } from '../openapi/operations';
import { startPetStore, type RunningPetStore } from '../petstore/open-pet-store';
import { requireGatewayToken } from '../petstore/gateway-token';
import { captureLogs } from './support/captured-logs';
import { createTestDatabase, type TestDatabase } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { createLogger } from '../lib/logger';

const REFUSED = { code: 'unauthorized', message: 'This pet store answers only its gateway.', status: 401 };

/** The embedded store listens on loopback: no local process may reach it past the gateway. */
describe('an embedded pet store answers only its gateway', () => {
  let testDb: TestDatabase;
  let db: Database;
  let store: RunningPetStore;
  const token = randomBytes(32).toString('base64url');
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    db = await testDb.open();
    store = await startPetStore({ db, schema: 'petstore_production', operations: compileOperations(loadOpenApiDocument()), gatewayToken: token, logger: createLogger({ level: 'error' }) });
  });
  afterAll(async () => {
    await store?.close();
    await db?.close();
    await testDb?.destroy();
  });

  test.each([
    ['no Authorization header', {}],
    ['another token', { authorization: `Bearer ${randomBytes(32).toString('base64url')}` }],
    ['the token without the bearer scheme', { authorization: token }],
    ['the token with a suffix', { authorization: `Bearer ${token}x` }],
  ])('when a request carries %s, then 401 with the Error body, and nothing is created', async (_what, headers: Record<string, string>) => {
    const listed = await fetch(`${store.url}/pets`, { headers });
    expect(listed.status).toBe(401);
    expect(listed.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await jsonOf(listed)).toEqual(REFUSED);

    const created = await fetch(`${store.url}/pets`, { method: 'POST', headers: { ...headers, ...json }, body: '{"name":"Sneaky","categoryId":1}' });
    expect(created.status).toBe(401);
    expect(await jsonOf(created)).toEqual(REFUSED);
    const all = await jsonOf(await fetch(`${store.url}/pets?limit=100`, { headers: { authorization: `Bearer ${token}` } }));
    expect(all.map((p: { name: string }) => p.name)).not.toContain('Sneaky');
  });

  test('when a request carries the token, then the store answers', async () => {
    const created = await fetch(`${store.url}/pets`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...json }, body: '{"name":"Invited","categoryId":1}' });
    expect(created.status).toBe(201);
    const listed = await fetch(`${store.url}/pets?limit=100`, { headers: { authorization: `Bearer ${token}` } });
    expect(listed.status).toBe(200);
    expect((await jsonOf(listed)).map((p: { name: string }) => p.name)).toContain('Invited');
  });

  test('when a token is short enough to guess, then the store refuses to start with it', () => {
    expect(() => requireGatewayToken('short-token')).toThrow(RangeError);
  });
});

describe('a gateway and its embedded stores', () => {
  let gw: TestGateway;
  const { lines, logger } = captureLogs<{ msg: string; upstreams?: Record<string, string> }>('info');

  beforeAll(async () => {
    gw = await startTestGateway({ logger });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test('when a client calls an embedded store directly, then it is refused, while the same calls through the gateway succeed', async () => {
    const upstreams = lines.find((l) => l.msg === 'gateway listening')!.upstreams!;
    expect(Object.keys(upstreams).sort()).toEqual(['production', 'staging']);
    for (const url of Object.values(upstreams)) {
      const direct = await fetch(`${url}/pets`);
      expect(direct.status).toBe(401);
      expect(await jsonOf(direct)).toEqual(REFUSED);
    }

    const dev = await signUpDeveloper(gw.url);
    const created = await fetch(`${gw.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.productionKey}`, 'content-type': 'application/json' },
      body: '{"name":"Through the front door","categoryId":1}',
    });
    expect(created.status).toBe(201);
    const staging = await fetch(`${gw.url}/staging/v1/pets`, { headers: { authorization: `Bearer ${dev.stagingKey}` } });
    expect(staging.status).toBe(200);
  });
});
