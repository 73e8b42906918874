import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types } from '@electric-sql/pglite';
import type { Database, Queryable } from './database';

const INT8 = 20;

export class DataDirLockedError extends Error {}

/**
 * PGlite serves exactly one process. A second process on the same directory would corrupt it,
 * so we hold a lock file with our pid and refuse to start while another live process holds it.
 */
function acquireLock(dir: string): () => void {
  const lockPath = join(dir, 'pglite.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(lockPath, 'utf8') === String(process.pid)) unlinkSync(lockPath);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new DataDirLockedError(
          `The embedded database in ${dir} is in use by process ${holder}. PGlite serves one process; ` +
            'stop the other process, use another DATA_DIR, or set DATABASE_URL to share a PostgreSQL server.',
        );
      }
      unlinkSync(lockPath); // stale lock left by a process that died
    }
  }
  throw new DataDirLockedError(`Could not lock ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite writes its files 0666 whatever the process umask; the data folder's 0700 already keeps
 * others out, and this makes every file its owner's alone too (a few ms for a fresh database).
 */
function ownerOnly(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077) chmodSync(path, mode & 0o700);
  }
}

/** WASI errno numbers (PGlite's file system reports these) of the failures an operator can mend. */
const WASI_ERRNO: Record<number, string> = {
  2: 'permission denied (EACCES)',
  19: 'disk quota exceeded (EDQUOT)',
  29: 'input/output error (EIO)',
  48: 'out of memory (ENOMEM)',
  51: 'no space left on device (ENOSPC)',
  63: 'operation not permitted (EPERM)',
  69: 'read-only file system (EROFS)',
};

/** PGlite's file system throws an `ErrnoError` with a number and no message: name what it means. */
function fileSystemFailure(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  const errno = (err as { errno?: unknown } | null)?.errno;
  if (typeof errno === 'number') return WASI_ERRNO[errno] ?? `file system error ${errno}`;
  return String(err);
}

/** `dataDir` undefined → in-memory database (tests that need no persistence). */
export async function openPglite(dataDir?: string): Promise<Database> {
  let release = () => {};
  let pgDir: string | undefined;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    release = acquireLock(dataDir);
    pgDir = join(dataDir, 'pglite');
  }
  let pg: PGlite;
  try {
    // relaxedDurability stays off: every commit is flushed to disk before the query resolves,
    // so an acknowledged write survives kill -9.
    pg = new PGlite({ dataDir: pgDir, relaxedDurability: false, parsers: { [INT8]: (v: string) => Number(v), [types.NUMERIC]: (v: string) => Number(v) } });
    await pg.waitReady;
    if (pgDir) ownerOnly(pgDir);
  } catch (err) {
    release();
    throw new Error(`The embedded database${dataDir ? ` in ${dataDir}` : ''} could not be opened: ${fileSystemFailure(err)}`, { cause: err });
  }

  const query = async <R>(sql: string, params: readonly unknown[] = []): Promise<R[]> => {
    const result = await pg.query<R>(sql, params as unknown[]);
    return result.rows;
  };
  return {
    kind: 'pglite',
    query,
    exec: async (sql) => {
      await pg.exec(sql);
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
      pg.transaction((tx) =>
        fn({
          query: async <R>(sql: string, params: readonly unknown[] = []) => (await tx.query<R>(sql, params as unknown[])).rows,
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
    ping: async () => {
      await pg.query('SELECT 1');
    },
    close: async () => {
      try {
        if (!pg.closed) await pg.close();
      } finally {
        release();
      }
    },
  };
}
