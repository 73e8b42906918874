import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { captureLogs } from './support/captured-logs';
import { tempDir } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { spawnPetStore, type PetStoreProcess } from './support/pet-store-process';
import { freePort } from '../bench/support/processes';

const REFUSED = { code: 'unauthorized', message: 'This pet store answers only its gateway.', status: 401 };

/**
 * A standalone store (`npm run start:petstore`) behind a gateway, as a remote upstream: with
 * PETSTORE_GATEWAY_TOKEN it answers only the gateway that holds the same *_UPSTREAM_TOKEN.
 */
describe('a standalone pet store that answers only its gateway', () => {
  const token = randomBytes(32).toString('base64url');
  const storeDir = tempDir('asg-remote-store-');
  let store: PetStoreProcess;
  let gw: TestGateway;
  let wrongGw: TestGateway;
  const { lines, logger } = captureLogs<{ msg: string; code?: string; upstreams?: unknown }>('info');

  beforeAll(async () => {
    store = await spawnPetStore({ port: await freePort(), dataDir: storeDir, gatewayToken: token }, 90_000);
    gw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: store.url, PRODUCTION_UPSTREAM_TOKEN: token }, logger });
    wrongGw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: store.url, PRODUCTION_UPSTREAM_TOKEN: randomBytes(32).toString('base64url') }, logger });
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    await wrongGw?.stop();
    if (store?.child.exitCode === null) {
      store.child.kill('SIGTERM');
      await store.exited;
    }
    rmSync(storeDir, { recursive: true, force: true });
  });

  test('when the store starts with a token, then its ready line says so without showing the token', () => {
    expect(store.output()).toContain('"gatewayOnly":true');
    expect(store.output()).not.toContain(token);
  });

  test('when a client calls the store directly, then 401 with the Error body, and nothing is created', async () => {
    const created = await fetch(`${store.url}/pets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Sneaky","categoryId":1}' });
    expect(created.status).toBe(401);
    expect(await jsonOf(created)).toEqual(REFUSED);
    const listed = await fetch(`${store.url}/pets`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(listed.status).toBe(401);
    expect(await jsonOf(listed)).toEqual(REFUSED);
  });

  test('when a client calls through the gateway that holds the token, then creates and lists reach the store', async () => {
    const dev = await signUpDeveloper(gw.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    const created = await fetch(`${gw.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Front door","categoryId":1}' });
    expect(created.status).toBe(201);
    const listed = await fetch(`${gw.url}/v1/pets?limit=100`, { headers: auth });
    expect(listed.status).toBe(200);
    const names = (await jsonOf(listed)).map((p: { name: string }) => p.name);
    expect(names).toContain('Front door');
    expect(names).not.toContain('Sneaky');
  });

  test("when the gateway holds the wrong token, then its client gets 502 bad_gateway (not the store's 401, which would blame the client's key), and it is logged", async () => {
    const dev = await signUpDeveloper(wrongGw.url);
    const res = await fetch(`${wrongGw.url}/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
    expect(res.status).toBe(502);
    expect(await jsonOf(res)).toEqual({ code: 'bad_gateway', message: "The upstream refused the gateway's credential.", status: 502 });
    expect(lines.some((l) => l.msg === 'request failed' && l.code === 'bad_gateway')).toBe(true);
  });

  test('when the gateways log their upstreams, then no token is in the log', () => {
    const logged = JSON.stringify(lines);
    expect(logged).toContain(store.url);
    expect(logged).not.toContain(token);
  });
});
