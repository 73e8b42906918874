import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { postgresBinDir, startPrivatePostgres } from './postgres-server';
import { redisAnswers, startPrivateRedis } from './redis-server';

export interface LocalServices {
  redisUrl: string;
  databaseUrl: string;
  /** What had to be started for this run, in words, for the run's log. */
  started: string[];
  /** Stops what was started (nothing when both servers were already there). */
  stop(): Promise<void>;
}

/**
 * The real Redis and PostgreSQL the tests talk to. A server that answers at its URL is used as it
 * is; one that does not but is installed is started privately on a free loopback port, for this
 * run only; one that is not installed fails at once, naming the package, rather than as hundreds
 * of failing tests.
 */
export async function ensureLocalServices(wanted: { redisUrl: string; databaseUrl: string }): Promise<LocalServices> {
  const started: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  let { redisUrl, databaseUrl } = wanted;

  try {
    if (!(await redisAnswers(redisUrl))) {
      if (!installed('redis-server')) throw new Error(`Redis does not answer at ${redisUrl} and redis-server is not installed: apt-get install -y redis-server`);
      const redis = await startPrivateRedis();
      stops.push(redis.stop);
      redisUrl = `${redis.url}/0`;
      started.push(`Redis did not answer at ${wanted.redisUrl}: started a private redis-server at ${redisUrl}`);
    }

    if (!(await postgresAnswers(databaseUrl))) {
      try {
        postgresBinDir();
      } catch {
        throw new Error(`PostgreSQL does not answer at ${databaseUrl} and is not installed: apt-get install -y postgresql`);
      }
      const postgres = await startPrivatePostgres();
      stops.push(postgres.destroy);
      databaseUrl = postgres.url;
      started.push(`PostgreSQL did not answer at ${wanted.databaseUrl}: started a private cluster at ${databaseUrl}`);
    }
  } catch (err) {
    await stopAll(stops);
    throw err;
  }

  return { redisUrl, databaseUrl, started, stop: () => stopAll(stops) };
}

async function stopAll(stops: Array<() => Promise<void>>): Promise<void> {
  for (const stop of stops.reverse()) await stop();
}

function installed(command: string): boolean {
  try {
    execFileSync('which', [command], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
