import { request, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { renderError } from '../../lib/render-error';
import { captureLogs } from '../../test/support/captured-logs';
import { servePipeline } from '../../test/support/pipeline-server';
import { until } from '../../test/support/until';
import { startRecordingUpstream } from '../../test/support/upstream-double';
import type { CacheOutcome, GatewayMetrics, RateLimitKind, UpstreamOutcome } from '../metrics/gateway-metrics';
import { pipelineErrorHandler } from '../pipeline/error-handler';
import { createTurnEndWriter } from '../pipeline/turn-end-writer';
import { composePipeline, type Environment, type GatewayRequest, type Step } from '../pipeline/pipeline';
import { createCircuitBreaker } from '../upstream/circuit-breaker';
import { createLinkRewriter } from '../upstream/upstream-links';
import { cors } from './cors';
import { proxyToUpstream, type ProxyOptions } from './proxy';

/** A test double of the metrics collaborator: records what the proxy reports. */
function recordingMetrics() {
  const upstream: Array<{ environment: Environment; outcome: UpstreamOutcome; seconds: number }> = [];
  const metrics: GatewayMetrics = {
    requestFinished(_environment: Environment, _route: string, _status: number, _seconds: number) {},
    cacheLookup(_environment: Environment, _outcome: CacheOutcome) {},
    rateLimited(_kind: RateLimitKind) {},
    upstreamFinished(environment, outcome, seconds) {
      upstream.push({ environment, outcome, seconds });
    },
    refusedEarly() {},
  };
  return { metrics, upstream, outcomes: () => upstream.map((u) => u.outcome) };
}

/** The proxy step alone (after `before`) on a real server in front of `upstreamUrl`, rendering Error bodies without a log line. */
async function proxyAlone(upstreamUrl: string, o: { timeoutMs?: number; before?: Step[] } = {}) {
  const recorded = recordingMetrics();
  const onError = (err: unknown, _req: GatewayRequest, res: ServerResponse) => void renderError(res, err);
  const proxy = proxyToUpstream({
    upstreamUrl,
    timeoutMs: o.timeoutMs ?? 1000,
    links: createLinkRewriter({ upstreamUrl, publicUrl: 'http://gateway.test', prefix: '/v1' }),
    breaker: createCircuitBreaker({ environment: 'production', failureThreshold: 5, openMs: 1000, logger: pino({ level: 'silent' }) }),
    metrics: recorded.metrics,
    onError,
  });
  const server = await servePipeline({ prefix: '/v1', environment: 'production', run: composePipeline([...(o.before ?? []), proxy.step], onError) });
  return {
    url: (path: string) => server.url(path),
    outcomes: recorded.outcomes,
    close: async () => {
      proxy.close();
      await server.close();
    },
  };
}

type Behaviour = 'ok' | 'not_found' | 'unavailable' | 'hang' | 'limits';

/** The proxy step alone, on a real HTTP server, in front of a real HTTP upstream whose behaviour the test switches. */
async function setUp() {
  let behaviour: Behaviour = 'ok';
  const upstream = await startRecordingUpstream((_req, res) => {
    if (behaviour === 'ok') res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    if (behaviour === 'limits') res.writeHead(200, { 'content-type': 'application/json', ratelimit: '"upstream";r=1;t=2', link: ['<http://x.test/a>; rel="a"', '<http://x.test/b>; rel="b"'] }).end('[]');
    if (behaviour === 'not_found') res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not_found","message":"Pet 9 was not found.","status":404}');
    if (behaviour === 'unavailable') res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
  });
  let time = 0;
  const breaker = createCircuitBreaker({ environment: 'staging', failureThreshold: 2, openMs: 3000, logger: pino({ level: 'silent' }), now: () => time });
  const recorded = recordingMetrics();
  const { lines, logger } = captureLogs<{ level: number; code?: string }>('info');
  const onError = pipelineErrorHandler(logger);
  const proxy = proxyToUpstream({
    upstreamUrl: upstream.url,
    timeoutMs: 300,
    links: createLinkRewriter({ upstreamUrl: upstream.url, publicUrl: 'http://gateway.test', prefix: '/staging/v1' }),
    breaker,
    metrics: recorded.metrics,
    onError,
  });
  // What earlier steps leave for the response: the proxy writes them with the upstream's.
  const stepHeaders: Step = (req, _res, next) => {
    req.ctx.headers.set('X-Request-Id', 'from-the-step');
    req.ctx.headers.set('RateLimit', '"minute";r=9;t=60');
    next();
  };
  const server = await servePipeline({ prefix: '/staging/v1', environment: 'staging', run: composePipeline([stepHeaders, proxy.step], onError) });
  const url = server.url('/pets');
  return {
    upstream,
    breaker,
    recorded,
    url,
    /** The codes of the error lines logged so far. */
    loggedErrors: () => lines.filter((l) => l.level >= 50).map((l) => l.code),
    behave: (b: Behaviour) => (behaviour = b),
    advance: (ms: number) => (time += ms),
    close: async () => {
      proxy.close();
      await server.close();
      await upstream.close();
    },
  };
}

describe('proxy step: circuit breaker and upstream metrics', () => {
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeEach(async () => {
    t = await setUp();
  });
  afterEach(() => t.close());

  test('when the upstream answers, then each call is reported with its status class, environment and duration', async () => {
    expect((await fetch(t.url)).status).toBe(200);
    t.behave('not_found');
    expect((await fetch(t.url)).status).toBe(404);
    t.behave('unavailable');
    expect((await fetch(t.url)).status).toBe(503);
    expect(t.recorded.outcomes()).toEqual(['2xx', '4xx', '5xx']);
    for (const call of t.recorded.upstream) {
      expect(call.environment).toBe('staging');
      expect(call.seconds).toBeGreaterThanOrEqual(0);
      expect(call.seconds).toBeLessThan(5);
    }
  });

  test("when earlier steps set headers, then the answer carries them with the upstream's, and the upstream's win a name both set", async () => {
    t.behave('limits');
    const res = await fetch(t.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('from-the-step');
    expect(res.headers.get('ratelimit')).toBe('"upstream";r=1;t=2');
    expect(res.headers.get('link')).toBe('<http://x.test/a>; rel="a", <http://x.test/b>; rel="b"');
    expect(await res.text()).toBe('[]');
    t.behave('not_found');
    const refused = await fetch(t.url);
    expect([refused.status, refused.headers.get('x-request-id'), refused.headers.get('ratelimit')]).toEqual([404, 'from-the-step', '"minute";r=9;t=60']);
  });

  test('when the upstream answers 503 as often as the threshold, then the next request gets 503 service_unavailable with Retry-After and never reaches it', async () => {
    t.behave('unavailable');
    await fetch(t.url);
    await fetch(t.url);
    expect(t.upstream.requests).toHaveLength(2);

    t.behave('ok');
    const refused = await fetch(t.url);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await refused.json()).toEqual({ code: 'service_unavailable', message: 'The upstream is unavailable; retry after 3 s.', status: 503 });
    expect(t.upstream.requests).toHaveLength(2);
    expect(t.recorded.outcomes()).toEqual(['5xx', '5xx', 'circuit_open']);
    expect(t.recorded.upstream[2]!.seconds).toBe(0);

    t.advance(3000);
    expect((await fetch(t.url)).status).toBe(200); // the probe
    expect(t.breaker.state).toBe('closed');
    expect((await fetch(t.url)).status).toBe(200);
    expect(t.upstream.requests).toHaveLength(4);
  });

  test('when the upstream is silent or refuses, then 504 "timeout" and 502 "refused" are reported and both count as failures', async () => {
    t.behave('hang');
    const timedOut = await fetch(t.url);
    expect(timedOut.status).toBe(504);
    expect(await timedOut.json()).toEqual({ code: 'gateway_timeout', message: 'The upstream did not answer within 300 ms.', status: 504 });
    await t.upstream.close();
    const refused = await fetch(t.url);
    expect(refused.status).toBe(502);
    expect(await refused.json()).toEqual({ code: 'bad_gateway', message: 'The upstream could not be reached or closed the connection.', status: 502 });
    expect(t.recorded.outcomes()).toEqual(['timeout', 'refused']);
    expect(t.breaker.state).toBe('open');
    expect((await fetch(t.url)).status).toBe(503);
  });

  test('when the circuit is open, then its refusals are answered without a line each: the breaker tells the outage once, the failures that opened it are logged', async () => {
    t.behave('hang');
    expect((await fetch(t.url)).status).toBe(504);
    await t.upstream.close();
    expect((await fetch(t.url)).status).toBe(502);
    expect(t.breaker.state).toBe('open');
    for (let i = 0; i < 3; i++) {
      const refused = await fetch(t.url);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ code: 'service_unavailable', message: 'The upstream is unavailable; retry after 3 s.', status: 503 });
    }
    expect(t.loggedErrors()).toEqual(['gateway_timeout', 'bad_gateway']);
  });

  test('when the half-open probe is abandoned by its client, then the next request becomes the probe instead of being refused', async () => {
    t.behave('unavailable');
    await fetch(t.url);
    await fetch(t.url);
    t.advance(3000);
    t.behave('hang');
    const controller = new AbortController();
    const probe = fetch(t.url, { signal: controller.signal }).catch((err: Error) => err.name);
    while (t.upstream.requests.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect((await fetch(t.url)).status).toBe(503); // the probe is out: others wait
    controller.abort();
    expect(await probe).toBe('AbortError');

    t.behave('ok');
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await statusOf(t.url); // the gateway learns of the abort a moment later
      if (status !== 200) await new Promise((r) => setTimeout(r, 10));
    }
    expect(status).toBe(200);
    expect(t.breaker.state).toBe('closed');
  });
});

/** Status over a fresh connection, so no keep-alive socket of an aborted request is involved. */
function statusOf(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    })
      .on('error', reject)
      .end();
  });
}

/** The proxy under /v1 with one upstream connection, a queue of one and a 300 ms timeout; its breaker never opens in these tests. */
function oneConnectionProxy(upstreamUrl: string, options: Pick<ProxyOptions, 'metrics' | 'onError'> & Partial<ProxyOptions>) {
  return proxyToUpstream({
    upstreamUrl,
    timeoutMs: 300,
    maxSockets: 1,
    maxQueue: 1,
    links: createLinkRewriter({ upstreamUrl, publicUrl: 'http://gateway.test', prefix: '/v1' }),
    breaker: createCircuitBreaker({ environment: 'production', failureThreshold: 100, openMs: 3000, logger: pino({ level: 'silent' }) }),
    ...options,
  });
}

/**
 * The proxy alone, with one upstream connection and a queue of one, in front of an upstream that
 * never answers, that answers and then streams its body forever (holding the connection), or
 * that names a small length and stops sending after the first byte.
 */
async function setUpBusy(upstreamBehaviour: 'silent' | 'endless_body' | 'stalled_small_body') {
  let cut = 0;
  const upstream = await startRecordingUpstream((_req, res) => {
    res.once('close', () => cut++);
    if (upstreamBehaviour === 'endless_body') res.writeHead(200, { 'content-type': 'application/json' }).write('[');
    if (upstreamBehaviour === 'stalled_small_body') res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10 }).write('[');
  });
  const recorded = recordingMetrics();
  const { lines, logger } = captureLogs<{ level: number; code?: string }>('info');
  const onError = pipelineErrorHandler(logger);
  const proxy = oneConnectionProxy(upstream.url, { metrics: recorded.metrics, onError });
  const server = await servePipeline({ prefix: '/v1', environment: 'production', run: composePipeline([proxy.step], onError) });
  return {
    upstream,
    recorded,
    /** The codes of the error lines logged so far. */
    loggedErrors: () => lines.filter((l) => l.level >= 50).map((l) => l.code),
    /** Upstream responses whose connection closed before they ended. */
    cut: () => cut,
    url: server.url('/pets'),
    close: async () => {
      proxy.close();
      await server.close();
      await upstream.close();
    },
  };
}

describe('proxy step: more calls than upstream connections', () => {
  let t: Awaited<ReturnType<typeof setUpBusy>> | undefined;
  afterEach(() => t?.close());

  test('when a call waits for the only connection, held by a response that never ends, then its timeout runs from the hand-off: 504, and it never reaches the upstream', async () => {
    t = await setUpBusy('endless_body');
    const first = await fetch(t.url);
    expect(first.status).toBe(200);
    const queued = await fetch(t.url);
    expect(queued.status).toBe(504);
    expect(await queued.json()).toEqual({ code: 'gateway_timeout', message: 'The upstream did not answer within 300 ms.', status: 504 });
    expect(t.upstream.requests).toHaveLength(1);
    expect(t.recorded.outcomes()).toEqual(['2xx', 'timeout']);
    void first.body?.cancel().catch(() => {});
  });

  test('when a client leaves in the middle of a response, then the upstream request is cut and its connection serves the next call', async () => {
    t = await setUpBusy('endless_body');
    const controller = new AbortController();
    const first = await fetch(t.url, { signal: controller.signal });
    expect(first.status).toBe(200);
    controller.abort();
    await until('the upstream request to be cut', () => t!.cut() === 1, 2000);
    const next = await fetch(t.url);
    expect(next.status).toBe(200);
    expect(t.upstream.requests).toHaveLength(2);
    void next.body?.cancel().catch(() => {});
  });

  test('when a small answer stops in the middle of its body, then the timeout still runs: 504 with an Error body, counted as a timeout', async () => {
    t = await setUpBusy('stalled_small_body');
    const res = await fetch(t.url);
    expect([res.status, await res.json()]).toEqual([504, { code: 'gateway_timeout', message: 'The upstream did not answer within 300 ms.', status: 504 }]);
    expect(t.recorded.outcomes()).toEqual(['timeout']);
    expect(t.loggedErrors()).toEqual(['gateway_timeout']);
    await until('the upstream request to be cut', () => t!.cut() === 1, 2000);
  });

  test('when a client leaves while a small answer is being read, then the upstream request is cut and nothing is logged or counted against the upstream', async () => {
    t = await setUpBusy('stalled_small_body');
    const controller = new AbortController();
    const answer = fetch(t.url, { signal: controller.signal }).catch((err: unknown) => err);
    await until('the upstream to start its answer', () => t!.upstream.requests.length === 1, 2000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    expect(((await answer) as DOMException).name).toBe('AbortError');
    await until('the upstream request to be cut', () => t!.cut() === 1, 2000);
    await new Promise((resolve) => setTimeout(resolve, 400)); // past the timeout
    expect(t.loggedErrors()).toEqual([]);
    expect(t.recorded.outcomes()).toEqual([]);
  });

  test('when the connection and the queue are taken, then the next call gets 503 service_unavailable with Retry-After at once, counted as saturated, not logged', async () => {
    t = await setUpBusy('silent');
    const held = [fetch(t.url), fetch(t.url)];
    while (t.upstream.requests.length < 1) await new Promise((r) => setTimeout(r, 5));
    const refused = await fetch(t.url);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ code: 'service_unavailable', message: 'The upstream is busy; retry after 1 s.', status: 503 });
    expect(t.recorded.outcomes()).toEqual(['saturated']);
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([504, 504]);
    expect(t.loggedErrors()).toEqual(['gateway_timeout', 'gateway_timeout']); // the timeouts are; load shedding is counted, not logged
  });
});

describe("proxy step: a turn's calls and small answers go out at its end", () => {
  /** The proxy, one connection and a queue of one, with the turn's end in the test's hands: no call goes upstream until `endTurn`. */
  async function setUpHeldTurn() {
    const upstream = await startRecordingUpstream((req, res) => {
      if (req.url === '/large') res.writeHead(200, { 'content-type': 'application/json', 'content-length': 70_000 }).end('"' + 'x'.repeat(69_998) + '"');
      else if (req.url === '/chunked') res.writeHead(200, { 'content-type': 'application/json' }).end('[1]');
      else res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('[]');
    });
    const handOffs: Array<() => void> = [];
    /** The body lengths of the answers handed to the turn-end writer. */
    const sent: number[] = [];
    const onError = pipelineErrorHandler(pino({ level: 'silent' }));
    const writer = createTurnEndWriter(onError);
    const proxy = oneConnectionProxy(upstream.url, {
      metrics: recordingMetrics().metrics,
      onError,
      beforeWrites: (task) => handOffs.push(task),
      send: (res, status, headers, body, theirs) => {
        sent.push(body.length);
        writer(res, status, headers, body, theirs);
      },
    });
    const server = await servePipeline({ prefix: '/v1', environment: 'production', run: composePipeline([proxy.step], onError) });
    return {
      upstream,
      sent,
      url: server.url,
      handOffs: () => handOffs.length,
      endTurn: () => handOffs.splice(0).forEach((task) => task()),
      close: async () => {
        proxy.close();
        await server.close();
        await upstream.close();
      },
    };
  }

  let t: Awaited<ReturnType<typeof setUpHeldTurn>>;
  beforeEach(async () => {
    t = await setUpHeldTurn();
  });
  afterEach(() => t.close());

  test('when a request reaches the proxy, then its upstream call waits for the end of the turn and goes out when it comes', async () => {
    const answer = fetch(t.url('/pets'));
    await until('the hand-off to wait for the end of the turn', () => t.handOffs() === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(t.upstream.requests).toHaveLength(0);
    t.endTurn();
    const res = await answer;
    expect([res.status, await res.text()]).toEqual([200, '[]']);
    expect(t.upstream.requests).toHaveLength(1);
  });

  test('when more calls than the connection and the queue wait for the end of the turn, then the one beyond them gets 503 at once', async () => {
    const answers = [1, 2, 3].map(() => fetch(t.url('/pets')).then(async (res) => [res.status, await res.text()] as const));
    const first = await Promise.race(answers);
    expect(first[0]).toBe(503);
    t.endTurn();
    expect((await Promise.all(answers)).map(([status]) => status).sort()).toEqual([200, 200, 503]);
    expect(t.upstream.requests).toHaveLength(2);
  });

  test('when a small answer of known length comes back, then it is sent whole at the end of the turn; a larger one or one of unknown length streams', async () => {
    const ask = async (path: string) => {
      const answer = fetch(t.url(path));
      await until(`${path} to wait for the end of the turn`, () => t.handOffs() > 0);
      t.endTurn();
      const res = await answer;
      return [res.status, (await res.text()).length];
    };
    expect(await ask('/pets')).toEqual([200, 2]);
    expect(t.sent).toEqual([2]);
    expect(await ask('/large')).toEqual([200, 70_000]);
    expect(await ask('/chunked')).toEqual([200, 3]);
    expect(t.sent).toEqual([2]);
  });

  test('when a HEAD is answered, then the client gets the length the upstream named and no body', async () => {
    const answer = fetch(t.url('/pets'), { method: 'HEAD' });
    await until('the hand-off to wait for the end of the turn', () => t.handOffs() === 1);
    t.endTurn();
    const res = await answer;
    expect([res.status, res.headers.get('content-length'), await res.text()]).toEqual([200, '2', '']);
    expect(t.upstream.requests.map((r) => r.method)).toEqual(['HEAD']);
  });

  test('when a call times out while it waits for the end of the turn, then 504, and it never reaches the upstream', async () => {
    const answer = fetch(t.url('/pets'));
    await until('the hand-off to wait for the end of the turn', () => t.handOffs() === 1);
    const res = await answer;
    expect([res.status, await res.json()]).toEqual([504, { code: 'gateway_timeout', message: 'The upstream did not answer within 300 ms.', status: 504 }]);
    t.endTurn();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.upstream.requests).toHaveLength(0);
  });

  test('when the client leaves while its call waits for the end of the turn, then the call never reaches the upstream', async () => {
    const controller = new AbortController();
    const answer = fetch(t.url('/pets'), { signal: controller.signal }).catch((err: unknown) => err);
    await until('the hand-off to wait for the end of the turn', () => t.handOffs() === 1);
    controller.abort();
    expect((await answer as DOMException).name).toBe('AbortError');
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.endTurn();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.upstream.requests).toHaveLength(0);
  });
});

describe('proxy step: what the client gets back', () => {
  test('when the upstream sets cookies, CORS, Alt-Svc, Clear-Site-Data or names its software, then none of it reaches the client; its own headers do', async () => {
    const upstream = await startRecordingUpstream((_req, res) =>
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'set-cookie': ['asg_session=fixated; Path=/', 'other=1'],
          'access-control-allow-origin': '*',
          'access-control-allow-credentials': 'true',
          'alt-svc': 'h3=":443"; ma=86400',
          'clear-site-data': '"cookies"',
          server: 'petstore/1.2.3',
          'x-powered-by': 'Express',
          connection: 'keep-alive, x-upstream-hop',
          'x-upstream-hop': 'internal',
          etag: '"v1"',
        })
        .end('[]'),
    );
    const proxy = await proxyAlone(upstream.url);
    try {
      const res = await fetch(proxy.url('/pets'));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('[]');
      const names = [...res.headers.keys()];
      for (const name of ['set-cookie', 'access-control-allow-origin', 'access-control-allow-credentials', 'alt-svc', 'clear-site-data', 'server', 'x-powered-by', 'x-upstream-hop']) {
        expect(names).not.toContain(name);
      }
      expect(res.headers.get('etag')).toBe('"v1"');
      expect(res.headers.get('content-type')).toBe('application/json');
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
  test("when the upstream names its own Vary, then the gateway's Vary: Origin stays beside it on an answer whose CORS headers depend on the Origin", async () => {
    const big = JSON.stringify('x'.repeat(70 * 1024));
    const upstream = await startRecordingUpstream((req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', vary: 'Accept-Encoding' }).end(req.url === '/pets' ? '[]' : big),
    );
    const proxy = await proxyAlone(upstream.url, { before: [cors({ allowedOrigins: ['http://portal.test'] })] });
    try {
      // A small answer is sent at the turn's end, a larger one streams: both merge the headers.
      for (const path of ['/pets', '/pets/1']) {
        const res = await fetch(proxy.url(path), { headers: { origin: 'http://portal.test' } });
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('http://portal.test');
        expect(res.headers.get('vary')).toBe('Origin, Accept-Encoding');
        expect(await res.text()).toBe(path === '/pets' ? '[]' : big);
      }
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  test('when an answer a step must see whole is larger than 8 MB, then 502 bad_gateway and the step never sees it', async () => {
    // 9 MB in 1 MB chunks, its length not named: only the count of bytes read can stop it.
    const upstream = await startRecordingUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 9; i++) res.write(chunk);
      res.end();
    });
    let seen = 0;
    // As a list-cache fill does: the step is handed the whole answer before the client gets it.
    const wantsWholeAnswer: Step = (req, _res, next) => {
      req.ctx.onUpstreamResponse = async () => {
        seen++;
      };
      next();
    };
    const proxy = await proxyAlone(upstream.url, { timeoutMs: 5000, before: [wantsWholeAnswer] });
    try {
      const res = await fetch(proxy.url('/pets'));
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ code: 'bad_gateway', message: 'The upstream response was cut off.', status: 502 });
      expect(seen).toBe(0);
      expect(proxy.outcomes()).toEqual(['refused']);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});

describe('proxy step: an upstream that breaks HTTP', () => {
  /** An upstream that answers every request with the given bytes, as no HTTP server library would. */
  async function rawUpstream(response: string | Buffer) {
    const sockets = new Set<Socket>();
    const server = createNetServer((socket) => {
      sockets.add(socket);
      socket.once('data', () => socket.end(response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => {
        for (const s of sockets) s.destroy();
        return new Promise((resolve) => server.close(resolve));
      },
    };
  }

  async function through(response: string | Buffer, path: string) {
    const upstream = await rawUpstream(response);
    const proxy = await proxyAlone(upstream.url);
    try {
      const res = await fetch(proxy.url(path));
      const { headers } = res;
      return { status: res.status, location: headers.get('location'), contentLength: headers.get('content-length'), body: await res.text(), outcomes: proxy.outcomes() };
    } finally {
      await proxy.close();
      await upstream.close();
    }
  }

  /** The client was answered 502 bad_gateway with this message, and the call counted as refused. */
  function expectBadGateway(answer: Awaited<ReturnType<typeof through>>, message: string) {
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body)).toEqual({ code: 'bad_gateway', message, status: 502 });
    expect(answer.outcomes).toEqual(['refused']);
  }

  test('when the upstream answers a status outside 200-599, then 502 bad_gateway, counted as a failure, and the gateway lives on', async () => {
    const answer = await through('HTTP/1.1 099 Odd\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi', '/pets');
    expectBadGateway(answer, 'The upstream answered with status 99, which HTTP does not define.');
  });

  test('when a small answer is cut off before the length it named, then 502 bad_gateway instead of a truncated 200', async () => {
    const answer = await through('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n[{"id":1', '/pets');
    expectBadGateway(answer, 'The upstream response was cut off.');
  });

  test('when the upstream switches protocols unasked, then 502 bad_gateway at once, not a 504 when the timeout ends', async () => {
    const answer = await through('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n', '/pets');
    expectBadGateway(answer, 'The upstream could not be reached or closed the connection.');
  });

  test('when the upstream answers in a transfer coding besides chunked, then 502 bad_gateway instead of its coded bytes as the body', async () => {
    // Node's client takes off only the chunked coding: the gzip one would reach the client as if it were the JSON.
    const coded = gzipSync('[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]');
    const head = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n${coded.length.toString(16)}\r\n`;
    const answer = await through(Buffer.concat([Buffer.from(head), coded, Buffer.from('\r\n0\r\n\r\n')]), '/pets');
    expectBadGateway(answer, 'The upstream answered with "Transfer-Encoding: gzip, chunked", a coding the gateway did not ask for and does not decode.');
  });

  test('when the upstream names the identity transfer coding, or any coding on an answer without a body, then the answer passes as sent', async () => {
    const identity = await through('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: identity\r\nConnection: close\r\n\r\n[]', '/pets');
    expect([identity.status, identity.body, identity.outcomes]).toEqual([200, '[]', ['2xx']]);
    const noBody = await through('HTTP/1.1 204 No Content\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n', '/pets');
    expect([noBody.status, noBody.body, noBody.outcomes]).toEqual([204, '', ['2xx']]);
  });

  test('when the upstream names a length on a 204, small or large, then the client gets the 204 without one', async () => {
    for (const length of [0, 100_000]) {
      const answer = await through(`HTTP/1.1 204 No Content\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`, '/pets');
      expect([answer.status, answer.contentLength, answer.body, answer.outcomes]).toEqual([204, null, '', ['2xx']]);
    }
  });

  test('when the upstream sends a Location that is no URL, then it passes unchanged instead of failing the response', async () => {
    const answer = await through('HTTP/1.1 201 Created\r\nLocation: http://[broken/pets/1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}', '/pets');
    expect(answer.status).toBe(201);
    expect(answer.location).toBe('http://[broken/pets/1');
    expect(answer.body).toBe('{}');
  });
});
