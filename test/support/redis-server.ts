import { spawn, type ChildProcess } from 'node:child_process';
import Redis from 'ioredis';

/** A private redis-server (the machine's binary) on its own port, so a test may kill and restart it. */
export async function startPrivateRedis(port: number): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !(await redisAnswers(url)); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url,
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
