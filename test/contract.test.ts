import type { OpenApiDocument } from '../openapi/document';
import { answerOf, servedContract, type Answer } from './support/contract';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { sendRaw } from './support/raw-http';
import { startRecordingUpstream } from './support/upstream-double';

type Contract = ReturnType<typeof servedContract>;

/** The contract as a third-party tool reads it: the document the gateway serves. */
async function contractOf(gw: TestGateway): Promise<Contract> {
  const res = await fetch(`${gw.url}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return servedContract((await res.json()) as OpenApiDocument);
}

/** An answer read from raw bytes (sendRaw), for requests no HTTP client sends as they are. */
async function rawAnswer(url: string, bytes: string): Promise<Answer> {
  const { status, headers, body } = await sendRaw(url, bytes, 5000);
  return { status, headers, body };
}

const OVERSIZED = JSON.stringify({ name: 'x'.repeat(70 * 1024), categoryId: 1 });
const BODIES: Record<string, string> = { createPet: '{"name":"Contract","categoryId":3}', createMessage: '{"message":"Hello, contract"}' };
const METHODS: Record<string, string> = { listPets: 'GET', createPet: 'POST', getPet: 'GET', createMessage: 'POST', listOrders: 'GET' };

/**
 * One request per case a client can meet, documented or not, against a real gateway; each answer
 * is checked against the document that gateway serves: its status is declared for the operation,
 * its declared headers are there and match their schemas, the gateway's own headers are declared,
 * and its body matches the response's schema.
 */
describe('the served contract, answer by answer', () => {
  let gw: TestGateway;
  let dev: Developer;
  let contract: Contract;
  let petId: number;
  const auth = () => ({ authorization: `Bearer ${dev.productionKey}` });
  const pathOf = (operationId: string) => ({ listPets: '/v1/pets', createPet: '/v1/pets', getPet: `/v1/pets/${petId}`, createMessage: '/v1/messages', listOrders: '/v1/store/orders' })[operationId]!;
  const send = (operationId: string, init: { path?: string; headers?: Record<string, string>; method?: string; body?: string } = {}) =>
    fetch(`${gw.url}${init.path ?? pathOf(operationId)}`, {
      method: init.method ?? METHODS[operationId],
      headers: { ...(METHODS[operationId] === 'POST' ? { 'content-type': 'application/json' } : {}), ...(init.headers ?? auth()) },
      body: init.body ?? (METHODS[operationId] === 'POST' ? BODIES[operationId] : undefined),
    }).then(answerOf);

  beforeAll(async () => {
    // A short request deadline, so that a request that never finishes arriving is answered within the test.
    gw = await startTestGateway({ env: { RATE_LIMIT_PER_MINUTE: '40', HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1000' } });
    dev = await signUpDeveloper(gw.url);
    contract = await contractOf(gw);
    const created = await send('createPet');
    petId = (JSON.parse(created.body) as { id: number }).id;
  });
  afterAll(() => gw?.stop());

  const expectAnswer = (operationId: string, answer: Answer, status: number) => {
    expect({ status: answer.status, body: answer.body }).toMatchObject({ status });
    contract.check(operationId, answer);
  };

  test('when the served document is read, then it has the five operations this test covers', () => {
    expect([...contract.operationIds].sort()).toEqual(Object.keys(METHODS).sort());
  });

  test.each([
    ['listPets', 200],
    ['createPet', 201],
    ['getPet', 200],
    ['createMessage', 202],
    // Not shipped yet: its documented answer today.
    ['listOrders', 404],
  ])('when %s is called as documented, then %i as declared', async (operationId, status) => {
    expectAnswer(operationId, await send(operationId), status);
  });

  test.each(Object.keys(METHODS))('when %s is called without a key, then 401 as declared', async (operationId) => {
    expectAnswer(operationId, await send(operationId, { headers: {} }), 401);
  });

  test.each(Object.keys(METHODS))('when %s is called with an unknown query parameter, then 400 as declared', async (operationId) => {
    expectAnswer(operationId, await send(operationId, { path: `${pathOf(operationId)}?colour=red` }), 400);
  });

  test.each(Object.keys(METHODS))('when %s is called expecting anything but 100-continue, then 417 as declared', async (operationId) => {
    const body = BODIES[operationId] ?? '';
    const head = `${METHODS[operationId]} ${pathOf(operationId)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nExpect: tea\r\n`;
    const framing = body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : '';
    expectAnswer(operationId, await rawAnswer(gw.url, `${head}${framing}Connection: close\r\n\r\n${body}`), 417);
  });

  test.each(Object.keys(METHODS))("when %s's path is called with a method it does not support, then 405 as declared", async (operationId) => {
    expectAnswer(operationId, await send(operationId, { method: 'PUT', body: '' }), 405);
  });

  test.each([
    ['listPets', '/v1/pets?limit=0'],
    ['listPets', '/v1/pets?status=lost'],
    ['getPet', '/v1/pets/abc'],
  ])('when %s is called with the bad parameter of %s, then 400 as declared', async (operationId, path) => {
    expectAnswer(operationId, await send(operationId, { path }), 400);
  });

  test.each([
    ['createPet', '{"name":"Rex"'],
    ['createPet', '{"name":"Rex","categoryId":1,"id":7}'],
    ['createMessage', '{}'],
  ])('when %s is sent the bad body %s, then 400 as declared', async (operationId, body) => {
    expectAnswer(operationId, await send(operationId, { body }), 400);
  });

  test('when getPet asks for an animal that does not exist, then 404 as declared', async () => {
    expectAnswer('getPet', await send('getPet', { path: '/v1/pets/987654321' }), 404);
  });

  test.each(['createPet', 'createMessage'])('when %s is sent a body over 64 KiB, then 413 as declared', async (operationId) => {
    const head = `POST ${pathOf(operationId)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nContent-Type: application/json\r\nContent-Length: ${OVERSIZED.length}\r\n\r\n`;
    expectAnswer(operationId, await rawAnswer(gw.url, head + OVERSIZED), 413);
  });

  test.each(Object.keys(METHODS))('when %s is called with headers over 16 KiB, then 431 as declared', async (operationId) => {
    const head = `${METHODS[operationId]} ${pathOf(operationId)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nX-Padding: ${'a'.repeat(17 * 1024)}\r\n\r\n`;
    expectAnswer(operationId, await rawAnswer(gw.url, head), 431);
  });

  test('when createPet\'s body stops arriving, then 408 as declared', async () => {
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n`;
    expectAnswer('createPet', await rawAnswer(gw.url, `${head}{"name":`), 408);
  });

  test('when listPets\'s head stops arriving, then 408 as declared', async () => {
    expectAnswer('listPets', await rawAnswer(gw.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nX-Slow: `), 408);
  });

  test('when a path no operation has is called, then 404 with the shared NotFound answer', async () => {
    const answer = await send('listPets', { path: '/v1/no-such-thing' });
    expect(answer.status).toBe(404);
    contract.checkShared('NotFound', answer);
  });

  test('when a key has used up its budget, then 429 as declared, with Retry-After', async () => {
    // An account of its own: its keys share one budget, which the other tests here must keep.
    const limited = (await signUpDeveloper(gw.url)).productionKey;
    let answer: Answer | undefined;
    for (let i = 0; i <= 40 && answer?.status !== 429; i++) answer = await send('listPets', { path: '/v1/pets?colour=red', headers: { authorization: `Bearer ${limited}` } });
    expectAnswer('listPets', (answer = await send('listPets', { headers: { authorization: `Bearer ${limited}` } })), 429);
    expect(answer.headers['retry-after']).toMatch(/^\d+$/);
  });

  test('when getPet is called after its sunset, then 410 as declared', async () => {
    gw.clock.set('2031-01-01T00:00:00Z');
    try {
      expectAnswer('getPet', await send('getPet'), 410);
    } finally {
      gw.clock.reset();
    }
  });
});

describe('the served contract when the upstream fails', () => {
  let gw: TestGateway;
  let dev: Developer;
  let contract: Contract;
  let failing: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let hanging: Awaited<ReturnType<typeof startRecordingUpstream>>;

  beforeAll(async () => {
    failing = await startRecordingUpstream((_req, res) => {
      const body = JSON.stringify({ code: 'internal_error', message: 'The store failed.', status: 500 });
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    hanging = await startRecordingUpstream(() => {
      /* never answers */
    });
    gw = await startTestGateway({
      env: { PRODUCTION_UPSTREAM: failing.url, STAGING_UPSTREAM: hanging.url, UPSTREAM_TIMEOUT_MS: '300', CIRCUIT_FAILURE_THRESHOLD: '1', CIRCUIT_OPEN_MS: '60000' },
    });
    dev = await signUpDeveloper(gw.url);
    contract = await contractOf(gw);
  });
  afterAll(async () => {
    await gw?.stop();
    await failing?.close();
    await hanging?.close();
  });

  const listPets = (prefix = '/v1', key = dev.productionKey) => fetch(`${gw.url}${prefix}/pets`, { headers: { authorization: `Bearer ${key}` } }).then(answerOf);

  // In order: the upstream fails, then is stopped (502), which opens the circuit (503).
  test('when the upstream answers 500 with an Error body, then 500 as declared', async () => {
    const answer = await listPets();
    expect(answer.status).toBe(500);
    contract.check('listPets', answer);
  });

  test('when the upstream is stopped, then 502 as declared, and while its circuit is open 503 as declared', async () => {
    await failing.close();
    const refused = await listPets();
    expect(refused.status).toBe(502);
    contract.check('listPets', refused);
    const spared = await listPets();
    expect(spared.status).toBe(503);
    contract.check('listPets', spared);
  });

  test('when the upstream never answers, then 504 as declared', async () => {
    const answer = await listPets('/staging/v1', dev.stagingKey);
    expect(answer.status).toBe(504);
    contract.check('listPets', answer);
  });
});
