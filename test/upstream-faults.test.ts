import { rmSync } from 'node:fs';
import { captureLogs } from './support/captured-logs';
import { tempDir } from './support/databases';
import { startGatedProxy } from './support/gated-proxy';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { spawnPetStore, type PetStoreProcess } from './support/pet-store-process';
import { freePort } from '../bench/support/processes';

const THRESHOLD = 3;
const OPEN_MS = 1000;
const TIMEOUT_MS = 1500;

const BAD_GATEWAY = { code: 'bad_gateway', message: 'The upstream could not be reached or closed the connection.', status: 502 };
const CIRCUIT_OPEN = { code: 'service_unavailable', message: 'The upstream is unavailable; retry after 1 s.', status: 503 };
const GATEWAY_TIMEOUT = { code: 'gateway_timeout', message: `The upstream did not answer within ${TIMEOUT_MS} ms.`, status: 504 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The production upstream is the real pet store as a child process (its own port and PGlite
 * DATA_DIR), behind a forwarder that counts what the gateway sends it. The process is killed
 * with SIGKILL, restarted on the same port, and frozen with SIGSTOP.
 */
describe('when the upstream process dies, comes back, or hangs', () => {
  const storeDir = tempDir('asg-upstream-');
  let port: number;
  let store: PetStoreProcess;
  let proxy: Awaited<ReturnType<typeof startGatedProxy>>;
  let gw: TestGateway;
  let auth: { authorization: string };
  const lines: Array<{ level: number; msg?: string; environment?: string }> = [];
  const acknowledged: number[] = [];
  let openedAt = 0;

  const list = () => fetch(`${gw.url}/v1/pets`, { headers: auth });
  const create = (name: string) =>
    fetch(`${gw.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1 }) });
  const logged = (level: number, prefix: string) => lines.filter((l) => l.level === level && l.msg?.startsWith(prefix));

  beforeAll(async () => {
    port = await freePort();
    proxy = await startGatedProxy(`http://127.0.0.1:${port}`);
    const starting = spawnPetStore({ port, dataDir: storeDir }, 90_000); // both initialise a PGlite database: in parallel
    const { logger } = captureLogs('info', lines);
    try {
      gw = await startTestGateway({
        env: {
          PRODUCTION_UPSTREAM: proxy.url,
          CIRCUIT_FAILURE_THRESHOLD: String(THRESHOLD),
          CIRCUIT_OPEN_MS: String(OPEN_MS),
          UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
          CACHE_TTL_SECONDS: '0', // every list goes upstream: a cached list would hide the outage
        },
        logger,
      });
    } finally {
      store = await starting; // so afterAll can stop it whatever happened
    }
    auth = { authorization: `Bearer ${(await signUpDeveloper(gw.url)).productionKey}` };
  }, 120_000);

  afterAll(async () => {
    if (store?.child.exitCode === null) {
      store.child.kill('SIGCONT');
      store.child.kill('SIGKILL');
      await store.exited;
    }
    await gw?.stop();
    await proxy?.close();
    rmSync(storeDir, { recursive: true, force: true });
  });

  test(`when the upstream is killed with SIGKILL, then 502 bad_gateway at once, and after ${THRESHOLD} failures 503 with Retry-After without contacting it`, async () => {
    // Creates run back to back; the process dies right after the sixth acknowledgement.
    let killedAt = 0;
    let failure: Response | undefined;
    for (let i = 0; i < 50 && !failure; i++) {
      const res = await create(`Survivor ${i}`);
      if (res.status !== 201) {
        failure = res;
        break;
      }
      acknowledged.push((await jsonOf(res)).id);
      if (acknowledged.length === 6) {
        killedAt = Date.now();
        store.child.kill('SIGKILL');
      }
    }
    expect(failure?.status).toBe(502);
    expect(await jsonOf(failure!)).toEqual(BAD_GATEWAY);
    const firstFailureMs = Date.now() - killedAt;
    expect(await store.exited).toBeNull(); // killed by the signal, no exit code

    // Consecutive failures until the circuit opens: the failed create, then lists.
    const statuses = [502];
    let first503: Response | undefined;
    while (statuses.length <= THRESHOLD) {
      const res = await list();
      statuses.push(res.status);
      if (res.status === 503) first503 = res;
      else expect(await jsonOf(res)).toEqual(BAD_GATEWAY);
    }
    openedAt = Date.now();
    expect(statuses).toEqual([...Array(THRESHOLD).fill(502), 503]);
    expect(first503!.headers.get('retry-after')).toBe('1');
    expect(await jsonOf(first503!)).toEqual(CIRCUIT_OPEN);

    // While open: answered at once, and the gateway neither connects nor sends anything upstream.
    const requestsBefore = proxy.requests.length;
    const connectionsBefore = proxy.connections();
    const refused = await Promise.all(Array.from({ length: 10 }, () => list()));
    expect(Date.now() - openedAt).toBeLessThan(OPEN_MS); // all inside one open period
    for (const res of refused) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await jsonOf(res)).toEqual(CIRCUIT_OPEN);
    }
    expect(proxy.requests.length).toBe(requestsBefore);
    expect(proxy.connections()).toBe(connectionsBefore);
    expect(logged(40, 'upstream circuit opened for production')).toEqual([expect.objectContaining({ environment: 'production' })]);
    process.stdout.write(`upstream-faults: first 502 ${firstFailureMs} ms after SIGKILL; circuit open ${openedAt - killedAt} ms after SIGKILL\n`);
  }, 60_000);

  test('when the open period is over, then exactly one probe reaches the upstream while the others still get 503; its failure opens the circuit again', async () => {
    await sleep(openedAt + OPEN_MS + 100 - Date.now());
    const before = proxy.requests.length;
    proxy.hold(); // keeps the probe in flight
    const probe = list();
    while (proxy.requests.length === before) await sleep(5);
    const others = await Promise.all(Array.from({ length: 5 }, () => list()));
    expect(others.map((r) => r.status)).toEqual(Array(5).fill(503));
    expect(proxy.requests.length).toBe(before + 1);

    proxy.release(); // the upstream is still dead: the probe fails
    const probed = await probe;
    expect(probed.status).toBe(502);
    expect(await jsonOf(probed)).toEqual(BAD_GATEWAY);
    expect((await list()).status).toBe(503);
    expect(proxy.requests.length).toBe(before + 1);
    expect(logged(40, 'upstream circuit opened')).toHaveLength(1); // one outage, one warning
  }, 30_000);

  test('when the upstream is restarted on the same port, then one probe per open period reaches it, 200s resume, and every acknowledged create is there', async () => {
    const requestsBefore = proxy.requests.length;
    const restartedAt = Date.now();
    let readyAt = 0;
    const restart = spawnPetStore({ port, dataDir: storeDir }, 60_000).then((p) => {
      readyAt = Date.now();
      return p;
    });
    const statuses: number[] = [];
    let firstOkAt = 0;
    for (let deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const res = await list();
      statuses.push(res.status);
      if (res.status === 200) {
        firstOkAt = Date.now();
        break;
      }
      expect(await jsonOf(res)).toEqual(res.status === 502 ? BAD_GATEWAY : CIRCUIT_OPEN);
      await sleep(50);
    }
    store = await restart;
    expect(statuses.at(-1)).toBe(200);
    const probes = statuses.filter((s) => s !== 503).length;
    expect(proxy.requests.length - requestsBefore).toBe(probes); // only probes reached the upstream
    expect(probes).toBeLessThanOrEqual(Math.floor((firstOkAt - restartedAt) / OPEN_MS) + 2);
    expect(statuses.length).toBeGreaterThan(probes * 3); // most requests never left the gateway
    expect(firstOkAt - readyAt).toBeLessThan(OPEN_MS + 2000);

    for (let i = 0; i < 5; i++) expect((await list()).status).toBe(200);
    expect(logged(30, 'upstream circuit closed for production')).toEqual([expect.objectContaining({ environment: 'production' })]);

    const all = await fetch(`${gw.url}/v1/pets?limit=100`, { headers: auth });
    expect(all.status).toBe(200);
    const ids = (await jsonOf(all)).map((p: { id: number }) => p.id);
    expect(ids).toEqual(expect.arrayContaining(acknowledged));
    process.stdout.write(
      `upstream-faults: restart ready ${readyAt - restartedAt} ms after spawn; first 200 ${firstOkAt - readyAt} ms after ready; ${statuses.length} requests, ${probes} reached the upstream\n`,
    );
  }, 90_000);

  test('when the upstream accepts connections but never answers (SIGSTOP), then 504 gateway_timeout after UPSTREAM_TIMEOUT_MS, and it answers again after SIGCONT', async () => {
    store.child.kill('SIGSTOP');
    try {
      const started = Date.now();
      const res = await list();
      const waited = Date.now() - started;
      expect(res.status).toBe(504);
      expect(await jsonOf(res)).toEqual(GATEWAY_TIMEOUT);
      expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
      expect(waited).toBeLessThan(TIMEOUT_MS + 3000);
      process.stdout.write(`upstream-faults: 504 after ${waited} ms (UPSTREAM_TIMEOUT_MS=${TIMEOUT_MS})\n`);
    } finally {
      store.child.kill('SIGCONT');
    }
    const res = await list(); // one timeout is below the threshold: the circuit is still closed
    expect(res.status).toBe(200);
  }, 30_000);
});
