import { Agent } from 'node:http';
import { startRecordingUpstream } from '../../test/support/upstream-double';
import { runPaced, type PacedOutcome } from './paced-client';

/** The soak's open-loop client: each request leaves when it is due, not one interval later. */
describe('paced client', () => {
  let server: Awaited<ReturnType<typeof startRecordingUpstream>>;
  const arrivals: number[] = [];

  beforeAll(async () => {
    server = await startRecordingUpstream((_req, res) => {
      arrivals.push(performance.now());
      res.end('[]');
    });
  });
  afterAll(() => server?.close());

  test('when run at 2 req/s for 1.5 s, then requests 0, 1 and 2 leave at 0, 0.5 and 1 s, and each send lag is well under an interval', async () => {
    const outcomes: PacedOutcome[] = [];
    const agent = new Agent({ keepAlive: true });
    const startedAt = performance.now();
    const run = await runPaced({
      url: server.url,
      rate: 2,
      seconds: 1.5,
      agent,
      next: () => ({ kind: 'list', method: 'GET', path: '/', headers: {}, check: () => undefined }),
      record: (o) => outcomes.push(o),
    });
    agent.destroy();
    expect(run.sent).toBe(3);
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
    // An interval here is 500 ms; one sent an interval late (the bug this guards) lags by 500 ms or more.
    for (const o of outcomes) expect(o.sendLagMs).toBeLessThan(250);
    const leftAt = arrivals.slice(-3).map((t) => t - startedAt);
    expect(leftAt[0]).toBeLessThan(250);
    expect(leftAt[1]).toBeGreaterThanOrEqual(450);
    expect(leftAt[2]).toBeGreaterThanOrEqual(950);
  });
});
