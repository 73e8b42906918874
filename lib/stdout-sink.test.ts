import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const requireLib = (file: string) => `require(${JSON.stringify(join(__dirname, file))})`;

/**
 * A child logging through the turn-batched destination to `sink`: `lines` lines over many turns
 * (every 97th 10 kB long, the rest 500 bytes), then `after`, then "logged" on stderr; it exits
 * when its stdin ends, unless it has no stdin to wait on.
 */
function childScript(sink: string, lines: number, after = '', waitForStdin = true): string {
  return `
    const { createLogger } = ${requireLib('logger.ts')};
    const { createTurnBatchedDestination } = ${requireLib('turn-batched-destination.ts')};
    const { createPipeSink, createStdoutSink } = ${requireLib('stdout-sink.ts')};
    const destination = createTurnBatchedDestination(${sink});
    const log = createLogger({ level: 'info', destination });
    let i = 0;
    const turn = () => {
      for (const end = Math.min(i + 50, ${lines}); i < end; i++) log.info({ i, pad: 'x'.repeat(i % 97 === 0 ? 10000 : 500) }, 'line');
      if (i < ${lines}) return setImmediate(turn);
      ${after}
      process.stderr.write('logged\\n');
    };
    turn();
    ${waitForStdin ? "process.stdin.on('end', () => process.exit(0)).resume();" : ''}
  `;
}

const nodeArgs = (script: string) => ['--import', 'tsx', '-e', script];
const env = { ...process.env, NODE_OPTIONS: '' };
type Line = { i?: number; msg?: string; level?: number; dropped?: number; raw?: string };
const parse = (out: string): Line[] =>
  out
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.startsWith('{') ? (JSON.parse(line) as Line) : { raw: line }));

/**
 * Runs the child with its stdout unread until it says "logged", then reads it, and ends its stdin
 * once what it wrote holds `enough`: the test decides when it exits, no timer.
 */
async function readLate(child: ChildProcessWithoutNullStreams, enough: (out: string) => boolean) {
  child.stdout.pause();
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (enough(out)) child.stdin.end();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    if (err.includes('logged')) child.stdout.resume();
  });
  const code = await new Promise((resolve) => child.once('close', resolve));
  return { code, err, lines: parse(out) };
}

const start = (script: string) => spawn(process.execPath, nodeArgs(script), { env });

describe('the pipe sink, when the reader falls behind', () => {
  it('keeps the event loop going and delivers every line, whole and in order, the process’s own last', async () => {
    // 4,000 lines (2.4 MB) into a pipe of 64 kB that nobody reads until the child has logged them all.
    const child = start(childScript('createPipeSink()', 4000, `destination.writeAtOnce('READY\\n');`));
    const { code, err, lines } = await readLate(child, (out) => out.endsWith('READY\n'));
    expect({ code, err }).toEqual({ code: 0, err: 'logged\n' });
    expect(lines.map((l) => l.i ?? l.raw)).toEqual([...Array.from({ length: 4000 }, (_, i) => i), 'READY']);
  });

  it('drops what exceeds its bound, and says how many lines once half of it is free', async () => {
    const child = start(childScript('createPipeSink({ maxBacklogBytes: 200000 })', 4000));
    const { code, lines } = await readLate(child, (out) => out.includes('log lines dropped'));
    expect(code).toBe(0);
    const notices = lines.filter((l) => l.msg !== 'line');
    expect(notices).toEqual([expect.objectContaining({ level: 40, msg: 'log lines dropped: the reader of stdout fell behind' })]);
    const kept = lines.filter((l) => l.msg === 'line').map((l) => l.i!);
    expect(kept.length).toBeGreaterThan(100); // the pipe's 64 kB and the bound's 200 kB
    expect(kept.length + notices[0]!.dropped!).toBe(4000);
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
  });

  it('keeps a warning beyond its bound', async () => {
    const child = start(childScript('createPipeSink({ maxBacklogBytes: 200000 })', 4000, `log.error('the last words');`));
    const { code, lines } = await readLate(child, (out) => out.includes('the last words'));
    expect(code).toBe(0);
    expect(lines.filter((l) => l.msg !== 'line').map((l) => l.msg)).toEqual(expect.arrayContaining(['the last words']));
  });

  it('exits within its patience when the reader never reads', async () => {
    const child = start(childScript('createPipeSink({ exitPatienceMs: 300 })', 4000, 'process.exit(0);'));
    child.stdout.pause();
    const started = Date.now();
    // 'exit', not 'close': the unread stdout never ends.
    const code = await new Promise((resolve) => child.once('exit', resolve));
    child.stdout.destroy();
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000); // without the bound it never exits
  });
});

describe('the stdout sink, when stdout is a file', () => {
  it("writes through pino's asynchronous destination, the last lines before the process exits", () => {
    const dir = mkdtempSync(join(tmpdir(), 'stdout-sink-'));
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      execFileSync(process.execPath, nodeArgs(childScript('createStdoutSink()', 2000, `log.info({ i: 2000 }, 'line'); process.exit(0);`, false)), { env, stdio: ['ignore', fd, 'ignore'] });
    } finally {
      closeSync(fd);
    }
    const lines = parse(readFileSync(file, 'utf8'));
    rmSync(dir, { recursive: true });
    expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 2001 }, (_, i) => i));
  });
});
