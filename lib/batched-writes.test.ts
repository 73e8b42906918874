import { createBatchedWrites } from './batched-writes';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('batched writes', () => {
  test('when writes are scheduled several times, then one write happens after the interval, and the next schedule makes another', async () => {
    let writes = 0;
    const batched = createBatchedWrites(async () => void writes++, { intervalMs: 20, onError: () => {} });
    batched.schedule();
    batched.schedule();
    batched.schedule();
    expect(writes).toBe(0);
    await tick(60);
    expect(writes).toBe(1);
    batched.schedule();
    await tick(60);
    expect(writes).toBe(2);
    await batched.close();
  });

  test('when a read is asked for during a write, then it runs after the write, and a failed write does not stop the next', async () => {
    const order: string[] = [];
    let fail = true;
    const batched = createBatchedWrites(
      async () => {
        order.push('write starts');
        await tick(20);
        order.push('write ends');
        if (fail) throw new Error('store down');
      },
      { intervalMs: 1000, onError: () => {} },
    );
    const failed = batched.flush();
    const read = batched.inTurn(async () => order.push('read'));
    await expect(failed).rejects.toThrow('store down');
    await read;
    fail = false;
    await batched.flush();
    expect(order).toEqual(['write starts', 'write ends', 'read', 'write starts', 'write ends']);
    await batched.close();
  });

  test('when a scheduled write fails, then onError hears of it; when closed, then what is left is written and nothing is scheduled again', async () => {
    const errors: unknown[] = [];
    let writes = 0;
    const batched = createBatchedWrites(
      async () => {
        writes++;
        if (writes === 1) throw new Error('store down');
      },
      { intervalMs: 10, onError: (err) => errors.push(err) },
    );
    batched.schedule();
    await tick(40);
    expect(errors.map((e) => (e as Error).message)).toEqual(['store down']);
    await batched.close();
    expect(writes).toBe(2);
    batched.schedule();
    await tick(40);
    expect(writes).toBe(2);
  });

  test('when the interval is not a positive integer, then it is refused', () => {
    for (const intervalMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => createBatchedWrites(async () => {}, { intervalMs, onError: () => {} })).toThrow('intervalMs must be a positive integer');
    }
  });
});
