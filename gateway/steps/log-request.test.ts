import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Level } from 'pino';
import type { ApiOperation } from '../../openapi/operations';
import { captureLogs } from '../../test/support/captured-logs';
import { headersSet, runStep, stepRequest } from '../../test/support/run-step';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { RequestContext } from '../pipeline/pipeline';
import { logRequest } from './log-request';

/**
 * The step with a logger at `level` and metrics that record each finished request; `send` runs it
 * on a request, its `finish` ends the response with a status as Node does (its head sent, then
 * `finish` and `close`), and its `leave` closes it as a client that left before any answer.
 */
function setUp(level: Level) {
  const { lines, logger } = captureLogs(level);
  const finished: unknown[][] = [];
  const metrics: Pick<GatewayMetrics, 'requestFinished'> = { requestFinished: (...args) => void finished.push(args) };
  const outcomes: Array<[string, number]> = [];
  const logged: Array<[RequestContext, string, number, number]> = [];
  const step = logRequest(logger, metrics, { record: (keyId, status) => void outcomes.push([keyId, status]) }, { record: (...args) => void logged.push(args) });
  const send = async (ctx: Partial<RequestContext>, method = 'GET', apiPath = '/pets/3') => {
    const req = stepRequest({ method, apiPath, ctx });
    const res = Object.assign(new EventEmitter(), { req, statusCode: 200, headersSent: false });
    const outcome = await runStep(step, req, res as unknown as ServerResponse);
    return {
      req,
      outcome,
      headers: headersSet(req),
      finish: (status: number) => {
        res.statusCode = status;
        res.headersSent = true;
        res.emit('finish');
        res.emit('close');
      },
      leave: () => res.emit('close'),
    };
  };
  return { lines, finished, outcomes, logged, send };
}

const getPet = { operationId: 'getPet' } as ApiOperation;

describe('log-request step', () => {
  test('when a request arrives, then its id is set as X-Request-Id and it goes on, with nothing logged or counted before the response finishes', async () => {
    const { lines, finished, send } = setUp('info');
    const { outcome, headers } = await send({ requestId: 'req-abc' });
    expect(outcome).toEqual({ next: 1 });
    expect(headers).toEqual({ 'X-Request-Id': 'req-abc' });
    expect(lines).toEqual([]);
    expect(finished).toEqual([]);
  });

  test('when the response finishes, then one line tells request id, environment, method, route, public path, status, key id and duration, and the metrics count it', async () => {
    const { lines, finished, send } = setUp('info');
    const request = await send({ requestId: 'req-abc', environment: 'staging', prefix: '/staging/v1', operation: getPet, startedAt: performance.now() - 1500 }, 'GET');
    request.finish(404);
    expect(lines).toHaveLength(1);
    const { time: _time, pid: _pid, hostname: _hostname, ms, ...line } = lines[0]!;
    expect(line).toEqual({ level: 30, requestId: 'req-abc', environment: 'staging', method: 'GET', route: 'getPet', path: '/staging/v1/pets/3', status: 404 });
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(finished).toEqual([['staging', 'getPet', 404, expect.any(Number)]]);
    expect(finished[0]![3]).toBeGreaterThanOrEqual(1.5);
  });

  test('when a later step names the key, then the line carries the key id known when the response finishes', async () => {
    const { lines, send } = setUp('info');
    const request = await send({ operation: getPet });
    request.req.ctx.keyId = 'key_123';
    request.finish(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: 'getPet', status: 200, keyId: 'key_123' });
  });

  test("when a key's response finishes, then its status is counted for the key's daily usage, and a response without a key is not", async () => {
    const { outcomes, send } = setUp('warn');
    const withKey = await send({ operation: getPet });
    withKey.req.ctx.keyId = 'key_123';
    expect(outcomes).toEqual([]);
    withKey.finish(429);
    (await send({ operation: getPet })).finish(401);
    expect(outcomes).toEqual([['key_123', 429]]);
  });

  test('when no operation matched, then the route is logged and counted as "unmatched"', async () => {
    const { lines, finished, send } = setUp('info');
    (await send({}, 'DELETE')).finish(405);
    expect(lines[0]).toMatchObject({ method: 'DELETE', route: 'unmatched', status: 405 });
    expect(finished).toEqual([['production', 'unmatched', 405, expect.any(Number)]]);
  });

  test('when the log level is above info, then nothing is logged but the metrics still count the request', async () => {
    const { lines, finished, send } = setUp('warn');
    (await send({ operation: getPet })).finish(201);
    expect(lines).toEqual([]);
    expect(finished).toEqual([['production', 'getPet', 201, expect.any(Number)]]);
  });

  test('when a request with a key finishes, then it goes to the request log with its context, method, status and duration; one without a key does not', async () => {
    const { logged, send } = setUp('warn');
    const withKey = await send({ keyId: 'key_123', startedAt: performance.now() - 20 }, 'POST');
    withKey.finish(201);
    (await send({})).finish(401);
    expect(logged).toEqual([[withKey.req.ctx, 'POST', 201, expect.any(Number)]]);
    expect(logged[0]![3]).toBeGreaterThanOrEqual(20);
  });

  test('when the client leaves before any answer, then the request is still logged, counted and recorded once, with status 499', async () => {
    const { lines, finished, outcomes, logged, send } = setUp('info');
    const request = await send({ keyId: 'key_123', operation: getPet });
    request.leave();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: 'getPet', status: 499, keyId: 'key_123' });
    expect(finished).toEqual([['production', 'getPet', 499, expect.any(Number)]]);
    expect(outcomes).toEqual([['key_123', 499]]);
    expect(logged).toEqual([[request.req.ctx, 'GET', 499, expect.any(Number)]]);
  });

  test('when a key is sent in the path, then the line shows it redacted, and a long path cut, as the request log does', async () => {
    const { lines, send } = setUp('info');
    (await send({ operation: getPet }, 'GET', `/pets/asg_prod_${'k'.repeat(43)}`)).finish(400);
    (await send({}, 'GET', `/${'p'.repeat(2000)}`)).finish(404);
    expect(lines.map((line) => line.path)).toEqual(['/v1/pets/asg_prod_[redacted]', `/v1/${'p'.repeat(507)}…`]);
  });
});
