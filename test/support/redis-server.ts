import Redis from 'ioredis';
import { freePort } from '../../bench/support/processes';
import { spawnUntilReady } from './child-process';

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** How long a redis-server may take to answer; the full suite on two cores has needed seconds. */
const START_TIMEOUT_MS = 15_000;
/** Free ports tried when none is given: another process may take one between the check and the bind. */
const PORT_ATTEMPTS = 3;

class PortTaken extends Error {}

/**
 * A private redis-server (the machine's binary), so a test may kill and restart it: on `port`
 * (a restart), or on a free port of its choosing. Resolves at its own ready line, which it prints
 * only once it has bound the port: another server answering there is never taken for it. A server
 * that exits or stays silent fails here, with its own output.
 */
export async function startPrivateRedis(port?: number): Promise<PrivateRedis> {
  if (port !== undefined) return startOn(port);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort());
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw err;
    }
  }
}

async function startOn(port: number): Promise<PrivateRedis> {
  let child;
  try {
    ({ child } = await spawnUntilReady({
      name: `redis-server on port ${port}`,
      command: 'redis-server',
      args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      env: {},
      ready: /Ready to accept connections/,
      timeoutMs: START_TIMEOUT_MS,
    }));
  } catch (err) {
    const { code, output } = err as { code?: number | null; output?: string };
    if (output === undefined) throw err; // silent until the timeout
    const failure = `redis-server on port ${port} exited (${code}) before it answered:\n${output}`;
    throw /already in use/i.test(output) ? new PortTaken(failure) : new Error(failure);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        // Killed by a signal, a process has no exit code: stopping it twice must not wait for a second exit.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** True when a Redis server answers PING at `url`; false on any failure, within about a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 1000, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
