import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../../db/database';
import { createTestDatabase, insertAccount, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { until } from '../support/until';
import { migrateKeys } from '../../identity/migrations';
import { schedulePurgeOfSessions } from '../../identity/session-purge';
import { createSessionService, SESSION_LIFETIME_MS } from '../../identity/session-service';

const SECRET = 'session-purge-secret-0123456789abcdefghijkl';
const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(testDatabaseKinds())('scheduled purge of sessions on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let accountId: number;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    accountId = await insertAccount(db);
  });

  afterAll(async () => {
    await testDb.destroy();
  });

  const stored = async () => (await db.query<{ id: string }>('SELECT id FROM accounts.sessions')).map((r) => r.id);

  test('deletes ended sessions at start and again on every interval, and keeps live ones', async () => {
    let clock = new Date('2026-05-01T08:00:00.000Z');
    const sessions = createSessionService({ db, secret: SECRET, now: () => clock });
    const long = await sessions.start(accountId);
    clock = new Date(clock.getTime() + SESSION_LIFETIME_MS + DAY_MS + 60_000);
    const recent = await sessions.start(accountId);
    const purged: number[] = [];
    const errors: unknown[] = [];

    const stop = schedulePurgeOfSessions(sessions, { intervalMs: 30, onError: (err) => errors.push(err), onPurged: (n) => purged.push(n) });
    try {
      await until('the purge at start', () => purged.length >= 1, 5000);
      expect(purged[0]).toBe(1);
      expect(await stored()).not.toContain(long.sessionId);
      expect(await stored()).toContain(recent.sessionId);

      // Time passes: the next interval deletes the session that has since ended, with no restart.
      clock = new Date(clock.getTime() + SESSION_LIFETIME_MS + DAY_MS + 60_000);
      await until('the next interval to delete the session ended since', async () => !(await stored()).includes(recent.sessionId), 5000);
      expect(purged.filter((n) => n > 0)).toEqual([1, 1]);
      expect(errors).toEqual([]);
    } finally {
      await stop();
    }
  });
});

// The schedule itself, with a stand-in for the store: no database needed, so not once per database kind.
describe('scheduled purge of sessions: the schedule', () => {
  test('reports a failed purge and tries again at the next interval; after stop it runs no more', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const failingOnce = {
      purgeExpired: async () => {
        calls++;
        if (calls === 1) throw new Error('store unavailable');
        return 0;
      },
    };
    const stop = schedulePurgeOfSessions(failingOnce, { intervalMs: 20, onError: (err) => errors.push(err) });
    await until('the purge after the failed one', () => calls >= 2, 5000);
    await stop();
    expect(errors).toEqual([new Error('store unavailable')]);
    const callsAtStop = calls;
    await sleep(80);
    expect(calls).toBe(callsAtStop);
  });

  test('stop waits for a purge under way, so the store is not closed beneath it', async () => {
    let finished = false;
    const slow = {
      purgeExpired: async () => {
        await sleep(100);
        finished = true;
        return 0;
      },
    };
    const stop = schedulePurgeOfSessions(slow, { onError: () => {} });
    await stop();
    expect(finished).toBe(true);
  });

  test('refuses an interval that is not a positive integer', () => {
    const sessions = { purgeExpired: async () => 0 };
    for (const intervalMs of [0, -1, 1.5]) expect(() => schedulePurgeOfSessions(sessions, { intervalMs, onError: () => {} })).toThrow('positive integer');
  });
});
