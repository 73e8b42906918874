import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { captureLogs } from './support/captured-logs';
import { expectMatchesPortalContract } from './support/contract';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { sendRaw } from './support/raw-http';
import { startRecordingUpstream } from './support/upstream-double';
import { pollFor, until } from './support/until';

type Line = { level: number; requestId?: string; path?: string; status?: number; keyId?: string };

/**
 * A client that gives up before its answer: the call was counted and reached the upstream, so the
 * key's request log, its daily usage and the access log show it, with nginx's 499.
 */
describe('a request whose client leaves before the answer', () => {
  const lines: Line[] = [];
  const waiting: ServerResponse[] = [];
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let gw: TestGateway;
  let dev: Developer;
  let keyId: string;

  beforeAll(async () => {
    // The upstream holds every call until the test ends: only the client can end it.
    upstream = await startRecordingUpstream((_req, res) => void waiting.push(res));
    gw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: upstream.url, CACHE_TTL_SECONDS: '0', LOG_LEVEL: 'info' }, logger: captureLogs('info', lines).logger });
    dev = await signUpDeveloper(gw.url);
    const keys: Array<{ id: string; environment: string }> = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    keyId = keys.find((k) => k.environment === 'production')!.id;
  });
  afterAll(async () => {
    for (const res of waiting) res.destroy();
    await gw?.stop();
    await upstream?.close();
  });

  test('then it is recorded once, as 499 with no code, in the request log, the daily usage and the access log', async () => {
    const sent = request(`${gw.url}/v1/pets/4`, { headers: { authorization: `Bearer ${dev.productionKey}`, 'x-request-id': 'gave-up-1' } });
    sent.on('error', () => {}); // the socket is destroyed below, on purpose
    sent.end();
    await until('the upstream has the call', () => upstream.requests.length === 1);
    sent.destroy();

    const logged = async () => {
      const res = await fetch(`${gw.url}/portal/api/keys/${keyId}/requests`, { headers: { cookie: dev.cookie } });
      expect(res.status).toBe(200);
      const body = await jsonOf(res);
      expectMatchesPortalContract('listKeyRequests', 200, body);
      return body as Array<{ path: string; status: number; code: string | null; requestId: string }>;
    };
    let records: Awaited<ReturnType<typeof logged>> = [];
    await until('the request is in its log', async () => (records = await logged()).length > 0);
    expect(records.map(({ path, status, code, requestId }) => ({ path, status, code, requestId }))).toEqual([{ path: '/v1/pets/4', status: 499, code: null, requestId: 'gave-up-1' }]);

    const usage = await jsonOf(await fetch(`${gw.url}/portal/api/keys/${keyId}/usage?days=1`, { headers: { cookie: dev.cookie } }));
    expect(usage).toMatchObject({ days: [{ ok: 0, clientErrors: 1, rateLimited: 0, serverErrors: 0 }] });

    const access = lines.filter((l) => l.requestId === 'gave-up-1');
    expect(access).toEqual([expect.objectContaining({ level: 30, path: '/v1/pets/4', status: 499, keyId })]);
  });

  test("when the gateway refuses a request's body on the socket, then it is recorded with that refusal, not as a client that left", async () => {
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nX-Request-Id: broken-body\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    expect((await sendRaw(gw.url, `${head}5\r\n{"nam\r\nZZ\r\n`)).status).toBe(400);
    let records: Array<{ status: number; code: string | null; requestId: string }> = [];
    await until('the request is in its log', async () => {
      records = await jsonOf(await fetch(`${gw.url}/portal/api/keys/${keyId}/requests?requestId=broken-body`, { headers: { cookie: dev.cookie } }));
      return records.length > 0;
    });
    expect(records.map(({ status, code }) => ({ status, code }))).toEqual([{ status: 400, code: 'invalid_request' }]);
    expect(lines.filter((l) => l.requestId === 'broken-body').map((l) => l.status)).toEqual([400]);
  });

  test('when it was pipelined behind another unanswered request, then each is recorded once as 499 and its upstream call is cut or never made', async () => {
    const ids = ['pipelined-100', 'pipelined-101', 'pipelined-102'];
    const head = (id: string) => `GET /v1/pets/${id.slice(-3)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nX-Request-Id: ${id}\r\n\r\n`;
    const callsBefore = upstream.requests.length;
    const { port } = new URL(gw.url);
    const client = connect(Number(port), '127.0.0.1', () => client.write(ids.map(head).join('')));
    client.on('error', () => {}); // destroyed below, on purpose
    await until('the upstream has the first call', () => upstream.requests.slice(callsBefore).some((r) => r.url === '/pets/100'));
    client.destroy();

    type Logged = { path: string; status: number; requestId: string };
    const recorded = async () => {
      const res = await fetch(`${gw.url}/portal/api/keys/${keyId}/requests`, { headers: { cookie: dev.cookie } });
      const body = (await jsonOf(res)) as Logged[];
      return body.filter((r) => ids.includes(r.requestId)).map(({ path, status, requestId }) => ({ path, status, requestId }));
    };
    // Node emits no 'close' for the two queued behind the first: only the gateway's edge can tell the log step they ended.
    const { value: records } = await pollFor(recorded, (found) => found.length >= 3, { withinMs: 5000 });
    expect(records.sort((a, b) => a.requestId.localeCompare(b.requestId))).toEqual(ids.map((requestId) => ({ path: `/v1/pets/${requestId.slice(-3)}`, status: 499, requestId })));
    const accessLines = lines.filter((l) => ids.includes(l.requestId!)).map((l) => [l.requestId, l.status]);
    expect(accessLines.sort()).toEqual(ids.map((id) => [id, 499]));

    // A call the gateway handed on is cut, as its client left (the upstream sees its connection close); one not yet handed on is never made.
    const callsOpen = () => waiting.slice(callsBefore).filter((res) => !res.closed).map((res) => res.req.url);
    const { value: open } = await pollFor(callsOpen, (urls) => urls.length === 0, { withinMs: 3000 });
    expect(open).toEqual([]);
  });
});

describe('a request whose client leaves while its key is looked up', () => {
  const lines: Line[] = [];
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await startRecordingUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
    gw = await startTestGateway({ database: 'postgres', exposeDatabase: true, env: { PRODUCTION_UPSTREAM: upstream.url, CACHE_TTL_SECONDS: '0', LOG_LEVEL: 'info' }, logger: captureLogs('info', lines).logger });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  test('then it goes no further: not counted for the key, not recorded in its log, not sent upstream; its access line says 499 without a key', async () => {
    const dev = await signUpDeveloper(gw.url);
    const { id, key } = await dev.issueKey({ name: 'never used' });
    const sent = request(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'left-during-lookup' } });
    sent.on('error', () => {});
    // The key's first lookup waits for the table; the client leaves meanwhile.
    await gw.db!.transaction(async (tx) => {
      await tx.query('LOCK TABLE accounts.api_keys IN ACCESS EXCLUSIVE MODE');
      sent.end();
      const waiting = "SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'accounts.api_keys'::regclass";
      await until('the lookup waits for the table', async () => (await gw.db!.query(waiting)).length > 0);
      sent.destroy();
      await until('its close is logged', () => lines.some((l) => l.requestId === 'left-during-lookup'));
    });
    // The lookup has its answer now; a request after it proves the key works and its use is counted.
    expect((await fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const keys: Array<{ id: string; usage: { requests: number } }> = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    expect(keys.find((k) => k.id === id)!.usage.requests).toBe(1);
    const records: Array<{ requestId: string }> = await jsonOf(await fetch(`${gw.url}/portal/api/keys/${id}/requests`, { headers: { cookie: dev.cookie } }));
    expect(records.map((r) => r.requestId)).not.toContain('left-during-lookup');
    expect(upstream.requests).toHaveLength(1);
    expect(lines.filter((l) => l.requestId === 'left-during-lookup').map(({ status, keyId }) => ({ status, keyId }))).toEqual([{ status: 499, keyId: undefined }]);
  });
});

