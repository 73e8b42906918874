import { readOncePerTurn } from './read-once-per-turn';

describe('reads shared within one event-loop turn', () => {
  test('when several requests of one turn read the same key, then one read is sent, after the turn, and all get its value', async () => {
    const sent: string[] = [];
    const read = readOncePerTurn(async (key) => {
      sent.push(key);
      return `${key}@${sent.length}`;
    });
    const first = read('production');
    const second = read('production');
    const other = read('staging');
    expect(sent).toEqual([]); // nothing leaves before the turn's end
    expect(await Promise.all([first, second, other])).toEqual(['production@1', 'production@1', 'staging@2']);
  });

  test('when a request comes in a later turn, then it gets a read of its own, never one sent before it arrived', async () => {
    let reads = 0;
    const read = readOncePerTurn(async () => ++reads);
    expect(await read('k')).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await read('k')).toBe(2);
  });

  test('when the read fails, then every request sharing it sees the failure', async () => {
    const read = readOncePerTurn(() => Promise.reject(new Error('Redis is away')));
    const results = await Promise.allSettled([read('k'), read('k')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
