import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createLogger, LOG_FLUSH_MS, type Logger } from './logger';

/** Ends a logger's destination, which closes its file and stops a buffered one's timer. */
function close(logger: Logger): Promise<void> {
  const destination = (logger as unknown as Record<symbol, NodeJS.EventEmitter & { end(): void }>)[pino.symbols.streamSym]!;
  return new Promise((resolve) => {
    destination.once('close', () => resolve());
    destination.end();
  });
}

describe('logger', () => {
  let dir: string;
  let file: string;
  let fd: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'asg-logger-'));
    file = join(dir, 'log');
    fd = openSync(file, 'w');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const lines = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

  test('when buffered, then a few lines are kept together until the flush interval, then written', async () => {
    const logger = createLogger({ level: 'info', buffered: true, fd });
    logger.info({ n: 1 }, 'request');
    logger.info({ n: 2 }, 'request');
    await sleep(LOG_FLUSH_MS / 4);
    expect(lines()).toEqual([]);
    // Written by the timer alone, nothing more logged; a few intervals allowed for a loaded machine.
    for (let waited = 0; lines().length < 2 && waited < LOG_FLUSH_MS * 20; waited += LOG_FLUSH_MS / 2) await sleep(LOG_FLUSH_MS / 2);
    expect(lines().map((l) => l.n)).toEqual([1, 2]);
    await close(logger);
  });

  test('when a process with a buffered logger exits, then its waiting lines are written first', () => {
    const script = `const { createLogger } = require('./lib/logger'); const logger = createLogger({ level: 'info', buffered: true }); logger.info({ n: 1 }, 'last words'); process.exit(3);`;
    let out = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: join(__dirname, '..'), encoding: 'utf8' });
    } catch (err) {
      const failed = err as { status: number; stdout: string };
      expect(failed.status).toBe(3);
      out = failed.stdout;
    }
    expect(JSON.parse(out)).toMatchObject({ n: 1, msg: 'last words', level: 30 });
  });

  test('when a secret is passed by a careless call, then it is redacted', async () => {
    const logger = createLogger({ level: 'info', buffered: true, fd });
    logger.info({ key: 'asg_live_secret', headers: { authorization: 'Bearer asg_live_secret' } }, 'careless');
    await close(logger);
    expect(readFileSync(file, 'utf8')).not.toContain('asg_live_secret');
    expect(lines()[0]).toMatchObject({ key: '[redacted]', headers: { authorization: '[redacted]' } });
  });
});
