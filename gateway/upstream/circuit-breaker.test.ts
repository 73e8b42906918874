import { captureLogs } from '../../test/support/captured-logs';
import { createCircuitBreaker, type CircuitAdmission, type CircuitPermit } from './circuit-breaker';

function setUp(options: { failureThreshold?: number; openMs?: number } = {}) {
  let time = 1_000_000;
  const { lines, logger } = captureLogs<{ level: number; msg: string; environment?: string; downMs?: number }>('debug');
  const breaker = createCircuitBreaker({
    environment: 'production',
    failureThreshold: options.failureThreshold ?? 3,
    openMs: options.openMs ?? 5000,
    logger,
    now: () => time,
  });
  return {
    breaker,
    lines,
    advance: (ms: number) => (time += ms),
    admitted: (): CircuitPermit => {
      const admission = breaker.admit();
      if (!admission.admitted) throw new Error(`expected admission, got a refusal (retry after ${admission.retryAfterSeconds} s)`);
      return admission.permit;
    },
  };
}

const refusal = (admission: CircuitAdmission) => (admission.admitted ? 'admitted' : admission.retryAfterSeconds);

describe('circuit breaker', () => {
  test('when failures are not consecutive, then the circuit stays closed', () => {
    const { breaker, admitted } = setUp({ failureThreshold: 3 });
    for (let i = 0; i < 5; i++) {
      admitted().failed();
      admitted().failed();
      admitted().succeeded();
    }
    expect(breaker.state).toBe('closed');
  });

  test('when the threshold of consecutive failures is reached, then it opens, refuses with the time left, and logs one warning', () => {
    const { breaker, admitted, advance, lines } = setUp({ failureThreshold: 3, openMs: 5000 });
    admitted().failed();
    admitted().failed();
    expect(breaker.state).toBe('closed');
    admitted().failed();
    expect(breaker.state).toBe('open');
    expect(refusal(breaker.admit())).toBe(5);
    advance(3900);
    expect(refusal(breaker.admit())).toBe(2); // 1.1 s left, rounded up
    advance(1000);
    expect(refusal(breaker.admit())).toBe(1);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toEqual([expect.objectContaining({ environment: 'production', msg: expect.stringMatching(/^upstream circuit opened for production/) })]);
  });

  test('when the open period is over, then exactly one probe is admitted and the others are refused until it ends', () => {
    const { breaker, admitted, advance } = setUp({ failureThreshold: 1, openMs: 5000 });
    admitted().failed();
    advance(5000);
    expect(breaker.state).toBe('half_open');
    const probe = admitted();
    for (let i = 0; i < 10; i++) expect(refusal(breaker.admit())).toBe(1);
    probe.succeeded();
    expect(breaker.state).toBe('closed');
    for (let i = 0; i < 10; i++) admitted().succeeded();
  });

  test('when the probe succeeds, then the circuit closes and says so once, with the outage length', () => {
    const { admitted, advance, lines } = setUp({ failureThreshold: 1, openMs: 500 });
    admitted().failed();
    advance(500);
    admitted().failed(); // probe fails: open again, not a second warning
    advance(500);
    admitted().succeeded();
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);
    expect(lines.filter((l) => l.level === 30)).toEqual([expect.objectContaining({ environment: 'production', downMs: 1000, msg: expect.stringMatching(/^upstream circuit closed/) })]);
  });

  test('when the probe fails, then the circuit opens for another full period', () => {
    const { breaker, admitted, advance } = setUp({ failureThreshold: 1, openMs: 5000 });
    admitted().failed();
    advance(6000);
    admitted().failed();
    expect(breaker.state).toBe('open');
    expect(refusal(breaker.admit())).toBe(5);
    advance(4999);
    expect(breaker.admit().admitted).toBe(false);
    advance(1);
    expect(breaker.admit().admitted).toBe(true);
  });

  test('when the probe is abandoned by its client, then the next caller becomes the probe', () => {
    const { breaker, admitted, advance } = setUp({ failureThreshold: 1, openMs: 1000 });
    admitted().failed();
    advance(1000);
    const first = admitted();
    expect(breaker.admit().admitted).toBe(false);
    first.abandoned();
    const second = admitted();
    expect(breaker.admit().admitted).toBe(false);
    second.succeeded();
    expect(breaker.state).toBe('closed');
  });

  test('when calls admitted before the circuit opened finish late, then their outcomes do not count', () => {
    const { breaker, admitted, advance } = setUp({ failureThreshold: 2, openMs: 1000 });
    const slow = [admitted(), admitted(), admitted(), admitted()];
    slow[0]!.failed();
    slow[1]!.failed(); // opens
    slow[2]!.succeeded(); // stale: must not close an open circuit
    expect(breaker.state).toBe('open');
    advance(1000);
    const probe = admitted();
    slow[3]!.failed(); // stale: must not re-open while the probe is out
    expect(breaker.state).toBe('half_open');
    probe.succeeded();
    expect(breaker.state).toBe('closed');
  });

  test('when a permit is settled twice, then only the first outcome counts', () => {
    const { breaker, admitted } = setUp({ failureThreshold: 2 });
    const permit = admitted();
    permit.failed();
    permit.failed();
    permit.succeeded();
    expect(breaker.state).toBe('closed');
    admitted().failed();
    expect(breaker.state).toBe('open');
  });
});
