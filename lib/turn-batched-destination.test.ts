import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createLogger } from './logger';
import { createTurnBatchedDestination } from './turn-batched-destination';

/** What a destination hands its sink: each write as it was made, and whether it was urgent. */
function recordingSink() {
  const writes: string[] = [];
  const urgent: boolean[] = [];
  const sink = {
    write: (chunk: string, isUrgent?: boolean) => {
      writes.push(chunk);
      urgent.push(isUrgent === true);
    },
    drainBeforeExit: () => {},
  };
  return { writes, urgent, sink };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
/** A line of exactly `bytes` bytes, its newline included. */
const lineOf = (i: number, bytes: number) => `${String(i).padStart(bytes - 1, '.')}\n`;

describe('a turn-batched log destination', () => {
  it("writes a turn's lines in one write at its end, in the order logged", async () => {
    const { writes, urgent, sink } = recordingSink();
    const logger = createLogger({ level: 'info', destination: createTurnBatchedDestination(sink) });
    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2 }, 'second');
    logger.debug('below the level');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(urgent).toEqual([false]);
    expect(writes[0]!.split('\n').filter(Boolean).map((line) => JSON.parse(line).msg)).toEqual(['first', 'second']);
    logger.info('third');
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!).msg).toBe('third');
  });

  it('writes a warning at once, with the lines that waited before it, as urgent', () => {
    const { writes, urgent, sink } = recordingSink();
    const logger = createLogger({ level: 'info', destination: createTurnBatchedDestination(sink) });
    logger.info('waiting');
    logger.warn('upstream circuit opened');
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split('\n').filter(Boolean).map((line) => [JSON.parse(line).level, JSON.parse(line).msg])).toEqual([
      [30, 'waiting'],
      [40, 'upstream circuit opened'],
    ]);
    logger.error('and an error');
    expect(writes).toHaveLength(2);
    expect(urgent).toEqual([true, true]);
  });

  it("writes the process's own line after the lines logged before it, at once", () => {
    const { writes, urgent, sink } = recordingSink();
    const destination = createTurnBatchedDestination(sink);
    const logger = createLogger({ level: 'info', destination });
    logger.info('gateway listening');
    destination.writeAtOnce('Animal Store Gateway listening on 127.0.0.1:1, ready at http://127.0.0.1:1\n');
    expect(writes).toEqual([expect.stringMatching(/"msg":"gateway listening"\}\nAnimal Store Gateway listening on 127\.0\.0\.1:1, ready at http:\/\/127\.0\.0\.1:1\n$/)]);
    expect(urgent).toEqual([true]);
  });

  it('writes what waits when flushed, and nothing more at the turn’s end', async () => {
    const { writes, sink } = recordingSink();
    const logger = createLogger({ level: 'info', destination: createTurnBatchedDestination(sink) });
    logger.info('before the ready line');
    logger.flush();
    expect(writes).toHaveLength(1);
    await nextTurn();
    expect(writes).toHaveLength(1);
  });

  it('cuts a long turn into writes of whole lines of at most 4096 bytes, and a longer line alone', async () => {
    const { writes, sink } = recordingSink();
    const destination = createTurnBatchedDestination(sink);
    const lines = [...Array.from({ length: 30 }, (_, i) => lineOf(i, 300)), lineOf(30, 5000), lineOf(31, 4096), lineOf(32, 10)];
    for (const line of lines) destination.write(line);
    await nextTurn();
    expect(writes.join('')).toBe(lines.join(''));
    expect(writes.map((w) => Buffer.byteLength(w))).toEqual([13 * 300, 13 * 300, 4 * 300, 5000, 4096, 10]);
  });

  it('counts bytes, not characters, against the 4096', async () => {
    const { writes, sink } = recordingSink();
    const destination = createTurnBatchedDestination(sink);
    const wide = `${'é'.repeat(1000)}\n`; // 2001 bytes, 1001 characters
    for (let i = 0; i < 3; i++) destination.write(wide);
    await nextTurn();
    expect(writes).toEqual([wide + wide, wide]);
  });
});

describe('a process logging through it', () => {
  const run = (body: string) => `
    const { createLogger } = require(${JSON.stringify(join(__dirname, 'logger.ts'))});
    const { createTurnBatchedDestination } = require(${JSON.stringify(join(__dirname, 'turn-batched-destination.ts'))});
    const logger = createLogger({ level: 'info', destination: createTurnBatchedDestination() });
    ${body}
  `;
  const node = (script: string) => ['--import', 'tsx', '-e', run(script)];
  const env = { ...process.env, NODE_OPTIONS: '' };
  const messages = (out: string) => out.split('\n').filter(Boolean).map((line) => JSON.parse(line).msg);

  it('writes the waiting lines when it calls process.exit in the same turn', () => {
    const out = execFileSync(process.execPath, node(`logger.info('stopped'); process.exit(0);`), { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    expect(messages(out)).toEqual(['stopped']);
  });

  it('writes them when it dies of an uncaught exception', async () => {
    const child = spawn(process.execPath, node(`logger.info('about to fail'); throw new Error('boom');`), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    expect(messages(out)).toEqual(['about to fail']);
  });

  it('goes on, and exits when done, after the reader of its stdout has gone', async () => {
    // Logs for a second after the pipe's reader closed it, then exits 0 by itself.
    const script = `
      const until = Date.now() + 1000;
      const tick = () => { logger.info({ pad: 'x'.repeat(500) }, 'line'); if (Date.now() < until) setImmediate(tick); else { logger.warn('done'); process.exit(0); } };
      setTimeout(tick, 200);
    `;
    const child = spawn(process.execPath, node(script), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.destroy();
    const started = Date.now();
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
