import { spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from '../../bench/support/processes';

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
 * (a restart), or on a free port of its choosing. Resolves only once the server answering there
 * is this one; a server that exits or stays silent fails here, with its own output.
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
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const url = `redis://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      // Killed by a signal, a process has no exit code: stopping it twice must not wait for a second exit.
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const failure = `redis-server on port ${port} exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output}`;
      throw /already in use/i.test(output) ? new PortTaken(failure) : new Error(failure);
    }
    // Another server answering on the port is not ours: a test would kill one and talk to the other.
    if ((await redisProcessId(url)) === child.pid) return { url, port, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server on port ${port} did not answer within ${START_TIMEOUT_MS} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True when a Redis server answers PING at `url`; false on any failure, within about a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  return (await withProbe(url, async (probe) => (await probe.ping()) === 'PONG')) ?? false;
}

/** The process id of the Redis server answering at `url`, or undefined when none answers. */
async function redisProcessId(url: string): Promise<number | undefined> {
  return withProbe(url, async (probe) => Number(/^process_id:(\d+)/m.exec(await probe.info('server'))?.[1]));
}

async function withProbe<T>(url: string, ask: (probe: Redis) => Promise<T>): Promise<T | undefined> {
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 1000, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return await ask(probe);
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}
