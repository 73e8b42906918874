import { rmSync } from 'node:fs';
import { freePort } from '../bench/support/processes';
import { tempDir } from './support/databases';
import { spawnGateway } from './support/gateway-process';

const SECRETS = { SESSION_SECRET: 'startup-session-secret-0123456789abcdef', KEY_HASH_SECRET: 'startup-key-hash-secret-0123456789abcdef' };

/** An operator whose gateway cannot start is told which server failed and why, on one line, and gets exit code 1. */
describe('start-up failures', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const failedStart = async (env: Record<string, string>): Promise<{ code: number | null; output: string }> => {
    const dataDir = tempDir('asg-startup-');
    dirs.push(dataDir);
    try {
      const started = await spawnGateway({ DATA_DIR: dataDir, ...env });
      started.child.kill('SIGKILL');
      throw new Error(`the gateway started:\n${started.output()}`);
    } catch (err) {
      const { code, output } = err as { code?: number | null; output?: string };
      if (output === undefined) throw err;
      return { code: code ?? null, output };
    }
  };

  test('when PostgreSQL at DATABASE_URL refuses connections, then it says so with the cause, not the 503 clients would see', async () => {
    const port = await freePort();
    const { code, output } = await failedStart({ DATABASE_URL: `postgres://test@127.0.0.1:${port}/test`, ...SECRETS });
    expect(code).toBe(1);
    expect(output).toContain(`Failed to start: PostgreSQL at DATABASE_URL could not be reached or prepared: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    expect(output).not.toContain('temporarily unavailable');
  });

  test('when Redis at REDIS_URL refuses connections, then it says so', async () => {
    const port = await freePort();
    const { code, output } = await failedStart({ REDIS_URL: `redis://127.0.0.1:${port}/0` });
    expect(code).toBe(1);
    expect(output).toMatch(/^Failed to start: Redis at REDIS_URL is unreachable: \S.*$/m);
  });

  test('when a start fails, then its error is the news: no "gateway stopped" line comes with it, before or after', async () => {
    const port = await freePort();
    const { code, output } = await failedStart({ REDIS_URL: `redis://127.0.0.1:${port}/0`, LOG_LEVEL: 'info' });
    expect(code).toBe(1);
    expect(output).toMatch(/^Failed to start: Redis at REDIS_URL is unreachable: \S.*$/m);
    // stdout and stderr reach the test through two pipes, in no fixed order: no such line at all is what can be checked.
    expect(output).not.toContain('gateway stopped');
  });
});
