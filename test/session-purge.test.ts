import { setTimeout as sleep } from 'node:timers/promises';
import { SESSION_LIFETIME_MS } from '../identity/session-service';
import { captureLogs } from './support/captured-logs';
import { until } from './support/until';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';

/** The gateway deletes ended sessions by itself: the sessions table does not grow with every login for ever. */
describe('expired portal sessions', () => {
  let gateway: TestGateway;
  const { lines, logger } = captureLogs('info');

  beforeAll(async () => {
    gateway = await startTestGateway({ logger, sessionPurgeIntervalMs: 25 });
  });

  afterAll(async () => {
    await gateway.stop();
  });

  test('when a session ended more than a day ago, then the gateway deletes it on its own schedule and its cookie stays refused', async () => {
    const developer = await signUpDeveloper(gateway.url);
    const keysPage = () => fetch(`${gateway.url}/portal/api/keys`, { headers: { origin: gateway.url, cookie: developer.cookie } });
    expect((await keysPage()).status).toBe(200);
    await sleep(100);
    expect(lines.filter((l) => l.msg === 'deleted expired sessions')).toEqual([]);

    gateway.clock.set(new Date(Date.now() + SESSION_LIFETIME_MS + 25 * 60 * 60 * 1000));
    await until('the purge log line', () => lines.some((l) => l.msg === 'deleted expired sessions'), 5000);

    expect(lines.filter((l) => l.msg === 'deleted expired sessions')).toEqual([expect.objectContaining({ level: 30, count: 1 })]);
    expect((await keysPage()).status).toBe(401);
  });
});
