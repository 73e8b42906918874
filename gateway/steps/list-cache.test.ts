import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { renderError } from '../../lib/render-error';
import { loadOpenApiDocument, type OpenApiDocument } from '../../openapi/document';
import { compileOperations } from '../../openapi/operations';
import { servePipeline } from '../../test/support/pipeline-server';
import { startRecordingUpstream } from '../../test/support/upstream-double';
import { createMemoryListCache } from '../cache/memory-list-cache';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { composePipeline, type GatewayRequest, type Step } from '../pipeline/pipeline';
import { createTurnEndWriter } from '../pipeline/turn-end-writer';
import { createCircuitBreaker } from '../upstream/circuit-breaker';
import { createLinkRewriter } from '../upstream/upstream-links';
import { listCache } from './list-cache';
import { matchRoute } from './match-route';
import { proxyToUpstream } from './proxy';

const noMetrics: GatewayMetrics = { requestFinished() {}, cacheLookup() {}, rateLimited() {}, upstreamFinished() {}, refusedEarly() {} };
const PETS = '[{"id":1,"name":"Rex","categoryId":1,"status":"available","tags":[]}]';

/**
 * The list-cache steps as the pipeline runs them (prefetch, then whatever stands between, then
 * serve), on a real HTTP server in front of a real upstream. In place of the rate limiter, a step
 * that holds a request marked `x-hold` until the test lets it go: the limiter's round trip, made
 * as long as the test needs.
 */
async function setUp(document: OpenApiDocument = loadOpenApiDocument()) {
  const upstream = await startRecordingUpstream((req, res) => res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end(PETS));
  const logger = pino({ level: 'silent' });
  const onError = (err: unknown, _req: GatewayRequest, res: ServerResponse) => void renderError(res, err);
  const cache = listCache({ cache: createMemoryListCache({ ttlSeconds: 60 }), logger, metrics: noMetrics, send: createTurnEndWriter(onError) });
  const proxy = proxyToUpstream({
    upstreamUrl: upstream.url,
    timeoutMs: 5000,
    links: createLinkRewriter({ upstreamUrl: upstream.url, publicUrl: 'http://gateway.test', prefix: '/v1' }),
    breaker: createCircuitBreaker({ environment: 'production', failureThreshold: 5, openMs: 1000, logger }),
    metrics: noMetrics,
    onError,
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  const hold: Step = (req, _res, next) => {
    if (req.headers['x-hold'] === undefined) return next();
    held++;
    return released.then(() => next());
  };
  const steps = [matchRoute(compileOperations(document)), cache.prefetch, hold, cache.serve, proxy.step];
  const server = await servePipeline({ prefix: '/v1', environment: 'production', run: composePipeline(steps, onError) });
  return {
    url: server.url('/pets?limit=5'),
    at: server.url,
    upstreamCalls: () => upstream.requests.filter((r) => r.method === 'GET').length,
    held: () => held,
    release: () => release(),
    close: async () => {
      proxy.close();
      await server.close();
      await upstream.close();
    },
  };
}

describe('list-cache steps', () => {
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeEach(async () => {
    t = await setUp();
  });
  afterEach(() => t.close());

  test('when a request missed before the rate limiter and the entry was filled while the limiter answered, then it is served from the cache, not fetched again', async () => {
    const late = fetch(t.url, { headers: { 'x-hold': '1' } });
    while (t.held() === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    const first = await fetch(t.url);
    expect(first.headers.get('x-cache')).toBe('MISS');
    expect(await first.text()).toBe(PETS);
    expect(t.upstreamCalls()).toBe(1);

    t.release();
    const answered = await late;
    expect(answered.status).toBe(200);
    expect(answered.headers.get('x-cache')).toBe('HIT');
    expect(await answered.text()).toBe(PETS);
    expect(t.upstreamCalls()).toBe(1);
  });

  test('when nothing was filled meanwhile, then the request that missed before the rate limiter fetches the entry once', async () => {
    const late = fetch(t.url, { headers: { 'x-hold': '1' } });
    while (t.held() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    t.release();
    const answered = await late;
    expect(answered.headers.get('x-cache')).toBe('MISS');
    expect(await answered.text()).toBe(PETS);
    expect(t.upstreamCalls()).toBe(1);
    expect((await fetch(t.url)).headers.get('x-cache')).toBe('HIT');
    expect(t.upstreamCalls()).toBe(1);
  });
});

describe('list-cache steps, told by the OpenAPI document', () => {
  const ok = { '200': { description: 'ok' } };
  // Another document's cache rules: the steps follow `x-cache` and `x-cache-invalidates`, whatever the operations are called.
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'Animals', version: '1' },
    paths: {
      '/animals': {
        get: { operationId: 'listAnimals', 'x-cache': 'list', responses: ok },
        post: { operationId: 'addAnimal', 'x-cache-invalidates': ['listAnimals'], responses: ok, requestBody: { content: { 'application/json': { schema: { type: 'object' } } } } },
      },
      '/pets': { get: { operationId: 'listPets', responses: ok } },
    },
  };
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeEach(async () => {
    t = await setUp(document);
  });
  afterEach(() => t.close());

  test('when an operation has x-cache: list, then its second call is served from the cache, and an operation without it is not cached', async () => {
    expect((await fetch(t.at('/animals'))).headers.get('x-cache')).toBe('MISS');
    const second = await fetch(t.at('/animals'));
    expect([second.status, second.headers.get('x-cache'), await second.text()]).toEqual([200, 'HIT', PETS]);
    expect(t.upstreamCalls()).toBe(1);

    await fetch(t.at('/pets'));
    const pets = await fetch(t.at('/pets'));
    expect([pets.status, pets.headers.get('x-cache')]).toEqual([200, null]);
    expect(t.upstreamCalls()).toBe(3);
  });

  test('when an operation with x-cache-invalidates succeeds, then the next list call misses and goes upstream', async () => {
    await fetch(t.at('/animals'));
    expect((await fetch(t.at('/animals'))).headers.get('x-cache')).toBe('HIT');
    const added = await fetch(t.at('/animals'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(added.status).toBe(201);
    await added.text();
    expect((await fetch(t.at('/animals'))).headers.get('x-cache')).toBe('MISS');
    expect(t.upstreamCalls()).toBe(2);
  });
});
