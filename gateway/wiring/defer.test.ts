import { createDefer } from './defer';

describe('createDefer', () => {
  test('when cleanups are registered, then they run in reverse order of registration, each after the one before has finished', async () => {
    const ran: string[] = [];
    const { defer, runAll } = createDefer({ timeoutMs: 1000, onFailure: () => {} });
    defer(() => void ran.push('database'));
    defer(async () => {
      await new Promise((r) => setTimeout(r, 20));
      ran.push('pet store');
    });
    defer(() => void ran.push('api key service'));
    expect(await runAll()).toBe(0);
    expect(ran).toEqual(['api key service', 'pet store', 'database']);
  });

  test('when a cleanup throws or rejects, then it is reported and counted, and the others still run', async () => {
    const ran: string[] = [];
    const failures: unknown[] = [];
    const { defer, runAll } = createDefer({ timeoutMs: 1000, onFailure: (err) => failures.push(err) });
    defer(() => void ran.push('first'));
    defer(() => {
      throw new Error('cannot close');
    });
    defer(() => Promise.reject(new Error('cannot close either')));
    defer(() => void ran.push('last'));
    expect(await runAll()).toBe(2);
    expect(ran).toEqual(['last', 'first']);
    expect(failures).toEqual([new Error('cannot close either'), new Error('cannot close')]);
  });

  test('when a cleanup never finishes, then it is given up on after the time limit and the next one runs', async () => {
    const ran: string[] = [];
    const failures: unknown[] = [];
    const { defer, runAll } = createDefer({ timeoutMs: 50, onFailure: (err) => failures.push(err) });
    defer(() => void ran.push('database'));
    defer(() => new Promise<void>(() => {}));
    expect(await runAll()).toBe(1);
    expect(ran).toEqual(['database']);
    expect(failures).toEqual([new Error('did not close within 50 ms')]);
  });

  test('when run twice, then each cleanup has run once', async () => {
    let runs = 0;
    const { defer, runAll } = createDefer({ timeoutMs: 1000, onFailure: () => {} });
    defer(() => void runs++);
    await runAll();
    await runAll();
    expect(runs).toBe(1);
  });
});
