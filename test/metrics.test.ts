import { rmSync } from 'node:fs';
import { parseConfig } from '../gateway/config';
import { createGateway } from '../gateway/wiring/create-gateway';
import { tempDir } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { sendRaw } from './support/raw-http';
import { freePort } from '../bench/support/processes';

const TOKEN = 'metrics-token-0123456789';
const EXPOSITION = 'text/plain; version=0.0.4; charset=utf-8';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition → samples (comments dropped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[name!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with exactly this name and label set; undefined when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted)?.value;
}

describe('metrics on the main port (METRICS_TOKEN) and on their own listener (METRICS_PORT)', () => {
  let gw: TestGateway;
  let dev: Developer;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    gw = await startTestGateway({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: String(metricsPort), ANONYMOUS_RATE_LIMIT_PER_MINUTE: '2' } });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(() => gw?.stop());

  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return parseExposition(await res.text());
  };
  const get = (path: string, key?: string) => fetch(gw.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  test('when API requests are answered, then every response is counted by environment, route and status, with its latency', async () => {
    const before = await scrape();
    expect(valueOf(before, 'asg_http_requests_total', { environment: 'production', route: 'listPets', status: '200' })).toBeUndefined();
    expect(valueOf(before, 'asg_key_cache_lookups_total', { outcome: 'miss' })).toBe(0);
    expect(valueOf(before, 'asg_key_cache_lookups_total', { outcome: 'hit' })).toBe(0);

    expect((await get('/v1/pets', dev.productionKey)).status).toBe(200); // key: store lookup (miss)
    expect((await get('/v1/pets', dev.productionKey)).status).toBe(200); // key: cached (hit)
    expect((await get('/staging/v1/pets', dev.stagingKey)).status).toBe(200); // another key: miss
    expect((await get('/v1/no-such-thing', dev.productionKey)).status).toBe(404); // hit
    expect((await get('/v1/pets')).status).toBe(401); // no key: no verification, 1 of 2 anonymous
    expect((await get('/v1/pets')).status).toBe(401);
    const refused = await get('/v1/pets');
    expect(refused.status).toBe(429);
    expect((await jsonOf(refused)).code).toBe('rate_limited');

    const after = await scrape();
    const requests = (environment: string, route: string, status: string) => valueOf(after, 'asg_http_requests_total', { environment, route, status });
    expect(requests('production', 'listPets', '200')).toBe(2);
    expect(requests('staging', 'listPets', '200')).toBe(1);
    expect(requests('production', 'unmatched', '404')).toBe(1);
    expect(requests('production', 'listPets', '401')).toBe(2);
    expect(requests('production', 'listPets', '429')).toBe(1);
    expect(after.filter((s) => s.name === 'asg_http_requests_total').reduce((sum, s) => sum + s.value, 0)).toBe(7);

    const latency = { environment: 'production', route: 'listPets' };
    expect(valueOf(after, 'asg_http_request_duration_seconds_count', latency)).toBe(5);
    expect(valueOf(after, 'asg_http_request_duration_seconds_bucket', { ...latency, le: '+Inf' })).toBe(5);
    expect(valueOf(after, 'asg_http_request_duration_seconds_bucket', { ...latency, le: '10' })).toBe(5);
    expect(valueOf(after, 'asg_http_request_duration_seconds_sum', latency)).toBeGreaterThan(0);
    expect(valueOf(after, 'asg_http_request_duration_seconds_sum', latency)).toBeLessThan(50); // generous: 5 local requests
    expect(valueOf(after, 'asg_http_request_duration_seconds_count', { environment: 'staging', route: 'listPets' })).toBe(1);
    // Buckets are cumulative, from 0.5 ms to 10 s.
    const buckets = after.filter((s) => s.name === 'asg_http_request_duration_seconds_bucket' && s.labels.route === 'listPets' && s.labels.environment === 'production');
    expect(buckets.map((s) => s.labels.le)).toEqual(['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
    expect(buckets.map((s) => s.value)).toEqual([...buckets.map((s) => s.value)].sort((a, b) => a - b));

    expect(valueOf(after, 'asg_rate_limited_total', { kind: 'anonymous' })).toBe(1);
    expect(valueOf(after, 'asg_rate_limited_total', { kind: 'key' })).toBe(0);
    expect(valueOf(after, 'asg_key_cache_lookups_total', { outcome: 'miss' })).toBe(2);
    expect(valueOf(after, 'asg_key_cache_lookups_total', { outcome: 'hit' })).toBe(2);
    expect(valueOf(after, 'asg_key_cache_entries')).toBe(2);
  });

  test('when scraped, then every cache outcome and upstream outcome is exposed from the start, per environment', async () => {
    const samples = await scrape();
    for (const environment of ['production', 'staging']) {
      for (const outcome of ['hit', 'miss', 'coalesced', 'bypass']) {
        expect(valueOf(samples, 'asg_cache_lookups_total', { environment, outcome })).toEqual(expect.any(Number));
      }
      for (const outcome of ['2xx', '3xx', '4xx', '5xx', 'refused', 'timeout', 'circuit_open']) {
        expect(valueOf(samples, 'asg_upstream_requests_total', { environment, outcome })).toEqual(expect.any(Number));
      }
      expect(valueOf(samples, 'asg_upstream_request_duration_seconds_count', { environment })).toEqual(expect.any(Number));
    }
  });

  test('when requests are refused before any route sees them, then they are counted by Error code, every code exposed from the start', async () => {
    const refused = (code: string, samples: Sample[]) => valueOf(samples, 'asg_refused_before_routing_total', { code });
    const before = await scrape();
    for (const code of ['invalid_request', 'payload_too_large', 'request_timeout', 'headers_too_large']) {
      expect(refused(code, before)).toEqual(expect.any(Number));
    }
    await sendRaw(gw.url, 'GARBAGE\r\n\r\n');
    await sendRaw(gw.url, 'GET /v1/pets HTTP/1.1\r\n\r\n');
    await sendRaw(gw.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    await sendRaw(gw.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    const after = await scrape();
    expect(refused('invalid_request', after)! - refused('invalid_request', before)!).toBe(3);
    expect(refused('headers_too_large', after)! - refused('headers_too_large', before)!).toBe(1);
  });

  test("when the parser refuses a request's body, then it is counted once, as an answer of its route, not as a refusal before routing or a client that left", async () => {
    const answered = (status: string, samples: Sample[]) => valueOf(samples, 'asg_http_requests_total', { environment: 'production', route: 'createPet', status }) ?? 0;
    const before = await scrape();
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    expect((await sendRaw(gw.url, `${head}5\r\n{"nam\r\nZZ\r\n`)).status).toBe(400);
    const after = await scrape();
    expect([answered('400', after) - answered('400', before), answered('499', after) - answered('499', before)]).toEqual([1, 0]);
    expect(valueOf(after, 'asg_refused_before_routing_total', { code: 'invalid_request' })).toBe(valueOf(before, 'asg_refused_before_routing_total', { code: 'invalid_request' }));
  });

  test('when a request expects anything but 100-continue, then its 417 is an API response of its route, not a refusal before routing', async () => {
    const answered = (samples: Sample[]) => valueOf(samples, 'asg_http_requests_total', { environment: 'production', route: 'listPets', status: '417' }) ?? 0;
    const before = await scrape();
    const answer = await sendRaw(gw.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${dev.productionKey}\r\nExpect: tea\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(417);
    const after = await scrape();
    expect(answered(after) - answered(before)).toBe(1);
    expect(valueOf(after, 'asg_refused_before_routing_total', { code: 'expectation_failed' })).toBeUndefined();
  });

  test('when scraped, then the process metrics are there too, prefixed asg_', async () => {
    const names = new Set((await scrape()).map((s) => s.name));
    for (const name of ['asg_process_resident_memory_bytes', 'asg_process_cpu_seconds_total', 'asg_nodejs_heap_size_used_bytes', 'asg_nodejs_eventloop_lag_seconds']) {
      expect(names).toContain(name);
    }
  });

  test('when GET /metrics has no token or the wrong one, then 401 with a Bearer challenge for realm "metrics"', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }];
    for (const headers of attempts) {
      const res = await fetch(`${gw.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await jsonOf(res)).toEqual({ code: 'unauthorized', message: 'Metrics require "Authorization: Bearer <METRICS_TOKEN>".', status: 401 });
    }
  });

  test('when GET /metrics carries the token, then 200 Prometheus text that no cache keeps', async () => {
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(EXPOSITION);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toMatch(/^# HELP asg_http_requests_total /m);
  });

  test('when the metrics listener is asked, then it serves GET /metrics without a token, and nothing else', async () => {
    const base = `http://127.0.0.1:${metricsPort}`;
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(EXPOSITION);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const samples = parseExposition(await res.text());
    expect(valueOf(samples, 'asg_http_requests_total', { environment: 'production', route: 'listPets', status: '200' })).toBe(2);

    const other = await fetch(`${base}/v1/pets`);
    expect(other.status).toBe(404);
    expect(await jsonOf(other)).toEqual({ code: 'not_found', message: 'Nothing at GET /v1/pets.', status: 404 });
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await jsonOf(post)).toEqual({ code: 'method_not_allowed', message: 'POST is not allowed on /metrics.', status: 405 });
  });
});

describe('metrics without METRICS_TOKEN, on METRICS_PORT=0', () => {
  test('when METRICS_TOKEN is unset, then /metrics on the main port is a 404; the listener on a free port is reported by start() and closed by stop()', async () => {
    const dataDir = tempDir('asg-gw-');
    const gateway = createGateway(
      parseConfig({
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        SESSION_SECRET: 'test-session-secret-0123456789abcdef',
        KEY_HASH_SECRET: 'test-key-hash-secret-0123456789abcdef',
      }),
    );
    let stopped = false;
    try {
      const { url, metricsUrl } = await gateway.start();
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(metricsUrl).not.toBe(`${url}/metrics`);

      const attempts: Array<Record<string, string>> = [{}, { authorization: `Bearer ${TOKEN}` }];
      for (const headers of attempts) {
        const res = await fetch(`${url}/metrics`, { headers });
        expect(res.status).toBe(404);
        expect(await jsonOf(res)).toEqual({ code: 'not_found', message: 'Nothing at GET /metrics.', status: 404 });
      }

      const scrape = await fetch(metricsUrl!);
      expect(scrape.status).toBe(200);
      expect(await scrape.text()).toMatch(/^asg_rate_limited_total\{kind="anonymous"\} 0$/m);

      await gateway.stop();
      stopped = true;
      const error = await fetch(metricsUrl!).then(
        () => undefined,
        (err: Error) => err,
      );
      expect((error?.cause as { code?: string } | undefined)?.code).toBe('ECONNREFUSED');
    } finally {
      if (!stopped) await gateway.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
