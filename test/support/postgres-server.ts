import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../bench/support/processes';

/**
 * A private PostgreSQL cluster (the machine's own binaries) in a temp directory on its own
 * port, so a test may crash it and start it again on the same data, like a real server restart.
 * Shared PostgreSQL (TEST_DATABASE_URL) is never touched.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth, loopback only). */
  url: string;
  port: number;
  /** Immediate shutdown (SIGQUIT to the postmaster, as `pg_ctl stop -m immediate`): a crash, recovered from the WAL on restart. */
  crash(): Promise<void>;
  /** Starts the server again on the same data directory and port; resolves once it accepts queries. */
  restart(): Promise<void>;
  /** Stops the server (if running) and deletes its files. */
  destroy(): Promise<void>;
  /** The server's own log, for failure messages. */
  log(): string;
}

/** Newest `/usr/lib/postgresql/<version>/bin` that has initdb (Debian's layout; CI installs the `postgresql` package). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error(`No PostgreSQL binaries under ${root}/<version>/bin; install the postgresql package.`);
  return join(root, versions[0]!, 'bin');
}

/** initdb and postgres refuse to run as root: as root, run them as the `postgres` user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'asg-pg-'));
  const dataDir = join(dir, 'data');
  const logPath = join(dir, 'server.log');
  if (user) chownSync(dir, user.uid, user.gid);
  const asServer = { ...(user ?? {}), env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' } };

  execFileSync(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], {
    ...asServer,
    stdio: 'pipe',
  });

  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  // A crashed test must not leave a postmaster behind.
  const killOnExit = () => child?.exitCode === null && child.kill('SIGQUIT');
  process.once('exit', killOnExit);

  async function launch() {
    const logFd = openSync(logPath, 'a');
    try {
      child = spawn(
        join(bin, 'postgres'),
        [
          '-D', dataDir,
          '-p', String(port),
          '-k', dir,
          '-c', 'listen_addresses=127.0.0.1',
          '-c', 'fsync=off', // a process crash keeps the OS page cache: acknowledged commits survive it anyway
          '-c', 'max_connections=50',
          '-c', 'shared_buffers=16MB',
        ],
        { ...asServer, stdio: ['ignore', logFd, logFd] },
      );
    } finally {
      closeSync(logFd);
    }
    const running = child;
    exited = new Promise((resolve) => running.once('exit', () => resolve()));
    await waitUntilReady(url, running, logPath);
  }

  async function stopWith(signal: NodeJS.Signals) {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  }

  await launch();
  return {
    url,
    port,
    crash: () => stopWith('SIGQUIT'),
    restart: async () => {
      await stopWith('SIGQUIT');
      await launch();
    },
    destroy: async () => {
      await stopWith('SIGINT'); // fast shutdown
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => (existsSync(logPath) ? readFileSync(logPath, 'utf8') : ''),
  };
}

async function waitUntilReady(url: string, child: ChildProcess, logPath: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}:\n${readFileSync(logPath, 'utf8')}`);
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`postgres not ready within ${timeoutMs} ms: ${(err as Error).message}\n${readFileSync(logPath, 'utf8')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
