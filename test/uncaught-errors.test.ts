import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import express from 'express';
import { expressErrorHandler, notFound } from '../gateway/http/express-errors';
import { createFrontHandler } from '../gateway/http/front-handler';
import { createPrometheusMetrics } from '../gateway/metrics/prometheus-metrics';
import { composePipeline, type Step } from '../gateway/pipeline/pipeline';
import { pipelineErrorHandler } from '../gateway/pipeline/error-handler';
import { logRequest } from '../gateway/steps/log-request';
import { captureLogs } from './support/captured-logs';
import { spawnUntilReady } from './support/child-process';
import { tempDir } from './support/databases';
import { signUpDeveloper } from './support/gateway-harness';
import { startRecordingUpstream } from './support/upstream-double';

const INTERNAL_ERROR = { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 };
type LogLine = { level: number; msg?: string; requestId?: string; code?: string; status?: number; err?: { message?: string; stack?: string } };


/** A bug in a pipeline step or a portal route: a generic 500 for the client, one log line with the details for us. */
describe('when a request handler fails with an unexpected error', () => {
  const { lines, logger } = captureLogs<LogLine>('info');
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const failing: Step = (req, _res, next) => {
      switch (req.ctx.apiPath) {
        case '/throws':
          throw new Error('sync failure: password=hunter2 at /srv/app/secret.ts');
        case '/rejects':
          return Promise.reject(new TypeError("async failure: Cannot read properties of undefined (reading 'hunter2')"));
        case '/rejects-with-nothing':
          return Promise.reject(undefined);
        default:
          return next();
      }
    };
    const answer: Step = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ reached: true }));
    };
    const pipeline = composePipeline([logRequest(logger, createPrometheusMetrics({ defaultMetrics: false }).metrics, { record: () => {} }), failing, answer], pipelineErrorHandler(logger));

    const app = express();
    app.get('/portal/throws', () => {
      throw new Error('portal sync failure: token=hunter2');
    });
    app.get('/portal/rejects', async () => {
      throw new Error('portal async failure: token=hunter2');
    });
    app.use(notFound);
    app.use(expressErrorHandler(logger));

    server = createServer(createFrontHandler([{ prefix: '/v1', environment: 'production', run: pipeline }], app));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const errorLinesOf = (requestId: string) => lines.filter((l) => l.requestId === requestId && l.level >= 50);

  test.each([
    ['a pipeline step throws', '/v1/throws', 'sync failure: password=hunter2 at /srv/app/secret.ts'],
    ['a pipeline step rejects', '/v1/rejects', "async failure: Cannot read properties of undefined (reading 'hunter2')"],
    ['a pipeline step rejects with undefined', '/v1/rejects-with-nothing', 'A gateway pipeline step failed with undefined.'],
    ['a portal route throws', '/portal/throws', 'portal sync failure: token=hunter2'],
    ['a portal route rejects', '/portal/rejects', 'portal async failure: token=hunter2'],
  ])('when %s, then 500 internal_error without details, and one error line with the request id and the error', async (_case, path, detail) => {
    const requestId = `test-${path.replace(/\W+/g, '-')}`;
    const res = await fetch(`${base}${path}`, { headers: { 'x-request-id': requestId } });
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(JSON.parse(text)).toEqual(INTERNAL_ERROR);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBe(requestId);
    expect(text).not.toMatch(/hunter2|secret|at \/|stack|undefined/);

    const logged = errorLinesOf(requestId);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 50, msg: 'request failed', requestId, code: 'internal_error', err: { message: detail } });
    expect(logged[0]!.err!.stack).toContain(detail);
  });

  test('when a step rejects with undefined, then the request ends there: the step after it never runs', async () => {
    const ok = await fetch(`${base}/v1/fine`);
    expect(await ok.json()).toEqual({ reached: true }); // the same pipeline, when nothing fails
    const failed = await fetch(`${base}/v1/rejects-with-nothing`);
    expect(await failed.json()).toEqual(INTERNAL_ERROR);
  });

  test('when a pipeline request fails, then the request log line records the 500 too', async () => {
    const requestId = 'test-request-line';
    await (await fetch(`${base}/v1/throws`, { headers: { 'x-request-id': requestId } })).text();
    await new Promise((r) => setTimeout(r, 50)); // the request line is written when the response finishes
    expect(lines.filter((l) => l.requestId === requestId && l.level === 30)).toEqual([expect.objectContaining({ status: 500 })]);
  });
});

/** The real entry point: an uncaught exception or unhandled rejection is logged as fatal, then the gateway stops gracefully and exits 1. */
describe('when the process meets an uncaught exception or an unhandled rejection', () => {
  const ROOT = join(__dirname, '..');

  async function startCrashable(env: Record<string, string>) {
    const started = await spawnUntilReady({
      name: 'gateway with a crash trigger',
      args: ['--import', 'tsx', join(ROOT, 'test', 'support', 'main-with-crash-trigger.ts')],
      env: { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
      ready: /ready at (http:\/\/\S+)/,
      timeoutMs: 60_000,
      stdin: 'pipe',
    });
    const logs = () =>
      started
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
    return { ...started, logs };
  }

  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test('when an exception is uncaught during a slow request, then it is logged as fatal JSON, the request still completes, and the exit code is 1', async () => {
    const upstream = await startRecordingUpstream((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1,"name":"Late","categoryId":1,"status":"available"}'), 1000);
    });
    const dataDir = tempDir('asg-crash-');
    dirs.push(dataDir);
    const gw = await startCrashable({ DATA_DIR: dataDir, PRODUCTION_UPSTREAM: upstream.url });
    try {
      const dev = await signUpDeveloper(gw.url);
      const inFlight = fetch(`${gw.url}/v1/pets/1`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
      while (upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
      gw.child.stdin!.write('exception\n');

      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: 1, name: 'Late' });
      expect(await gw.exited).toBe(1);
      const logs = gw.logs();
      expect(logs.filter((l) => l.level === 60)).toEqual([expect.objectContaining({ msg: 'uncaught exception', err: expect.objectContaining({ message: 'uncaught failure with a secret detail' }) })]);
      expect(logs.find((l) => l.msg === 'gateway stopped')).toMatchObject({ inFlight: 1, cut: 0, closeFailures: 0 });
    } finally {
      if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
      await upstream.close();
    }
  }, 120_000);

  test('when a rejection is unhandled, then it is logged as fatal JSON and the process stops and exits 1', async () => {
    const dataDir = tempDir('asg-crash-');
    dirs.push(dataDir);
    const gw = await startCrashable({ DATA_DIR: dataDir });
    try {
      gw.child.stdin!.write('rejection\n');
      expect(await gw.exited).toBe(1);
      const logs = gw.logs();
      expect(logs.filter((l) => l.level === 60)).toEqual([
        expect.objectContaining({ msg: 'unhandled promise rejection', err: expect.objectContaining({ message: 'unhandled rejection with a secret detail' }) }),
      ]);
      expect(logs.find((l) => l.msg === 'gateway stopped')).toMatchObject({ closeFailures: 0 });
    } finally {
      if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
    }
  }, 120_000);
});
