import jwt from 'jsonwebtoken';
import type { Database, Queryable } from '../../db/database';
import { ApiError } from '../../lib/api-error';
import { createTestDatabase, insertAccount, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { migrateKeys } from '../../identity/migrations';
import { until } from '../support/until';
import { createSessionService, SESSION_LIFETIME_MS, sessionCookieOptions, type SessionService } from '../../identity/session-service';

const SECRET = 'session-test-secret-0123456789abcdefghijkl';

describe('session cookie options', () => {
  test('when the public URL is https, then the cookie is Secure, HttpOnly, SameSite=Lax on /portal', () => {
    expect(sessionCookieOptions('https://portal.example.com')).toEqual({ httpOnly: true, sameSite: 'lax', path: '/portal', secure: true });
  });

  test('when the public URL is http, then the cookie is not marked Secure', () => {
    expect(sessionCookieOptions('http://localhost:8080').secure).toBe(false);
  });
});

describe.each(testDatabaseKinds())('session service on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let clock: Date;
  let sessions: SessionService;
  let accountId: number;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    accountId = await insertAccount(db);
  });

  beforeEach(() => {
    clock = new Date('2026-05-01T08:00:00.000Z');
    sessions = createSessionService({ db, secret: SECRET, now: () => clock });
  });

  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  test('when a session starts, then its token is an HS256 JWT carrying sid and sub, valid 12 hours', async () => {
    const started = await sessions.start(accountId);
    expect(started.expiresAt).toEqual(new Date(clock.getTime() + SESSION_LIFETIME_MS));
    const decoded = jwt.decode(started.token, { complete: true });
    expect(decoded?.header.alg).toBe('HS256');
    expect(decoded?.payload).toMatchObject({
      sid: started.sessionId,
      sub: String(accountId),
      iat: clock.getTime() / 1000,
      exp: clock.getTime() / 1000 + 12 * 60 * 60,
    });
    await expect(sessions.resolve(started.token)).resolves.toEqual({ sessionId: started.sessionId, accountId, expiresAt: started.expiresAt });
  });

  test('when a session ends, then its still-signed token no longer resolves', async () => {
    const { token } = await sessions.start(accountId);
    await sessions.end(token);
    await expect(sessions.resolve(token)).resolves.toBeNull();
  });

  test('when 12 hours pass, then the session no longer resolves', async () => {
    const { token } = await sessions.start(accountId);
    clock = new Date(clock.getTime() + SESSION_LIFETIME_MS - 1000);
    await expect(sessions.resolve(token)).resolves.not.toBeNull();
    clock = new Date(clock.getTime() + 1000);
    await expect(sessions.resolve(token)).resolves.toBeNull();
  });

  test('when a token is signed with another secret, uses another algorithm or is garbage, then it does not resolve', async () => {
    const { sessionId } = await sessions.start(accountId);
    const claims = { sid: sessionId, sub: String(accountId), iss: 'animal-store-portal', aud: 'animal-store-portal' };
    const forged = jwt.sign(claims, 'another-secret-0123456789abcdefghijklmnop', { algorithm: 'HS256', expiresIn: 3600 });
    const unsigned = jwt.sign(claims, '', { algorithm: 'none', expiresIn: 3600 } as jwt.SignOptions);
    for (const token of [forged, unsigned, 'garbage', '', 'a.b.c']) await expect(sessions.resolve(token)).resolves.toBeNull();
  });

  test('when a token names another account than its session row, then it does not resolve', async () => {
    const { sessionId } = await sessions.start(accountId);
    const tampered = jwt.sign(
      { sid: sessionId, sub: String(accountId + 1000), iss: 'animal-store-portal', aud: 'animal-store-portal', iat: clock.getTime() / 1000, exp: clock.getTime() / 1000 + 60 },
      SECRET,
      { algorithm: 'HS256' },
    );
    await expect(sessions.resolve(tampered)).resolves.toBeNull();
  });

  test('when the account is suspended, then no session starts: 403 as its sign-in answers, and no row is written', async () => {
    const suspended = await insertAccount(db);
    await db.query(`UPDATE accounts.accounts SET status = 'suspended', suspended_at = now() WHERE id = $1`, [suspended]);
    const err = await sessions.start(suspended).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toBody()).toEqual({ code: 'forbidden', message: 'This account is suspended; contact support.', status: 403 });
    expect(await db.query('SELECT id FROM accounts.sessions WHERE account_id = $1', [suspended])).toEqual([]);
  });

  test('when the account has been erased, then no session starts: 401 as a sign-in of an unknown email answers, not a foreign-key error', async () => {
    const erased = await insertAccount(db);
    await db.query('DELETE FROM accounts.accounts WHERE id = $1', [erased]);
    const err = await sessions.start(erased).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toBody()).toEqual({ code: 'unauthorized', message: 'Email or password is incorrect.', status: 401 });
    expect(await db.query('SELECT id FROM accounts.sessions WHERE account_id = $1', [erased])).toEqual([]);
  });

  test('when sessions expired more than a day ago, then purging deletes them and keeps live ones', async () => {
    const old = await sessions.start(accountId);
    clock = new Date(clock.getTime() + SESSION_LIFETIME_MS + 25 * 60 * 60 * 1000);
    const live = await sessions.start(accountId);
    expect(await sessions.purgeExpired()).toBeGreaterThanOrEqual(1);
    const ids = (await db.query<{ id: string }>('SELECT id FROM accounts.sessions')).map((r) => r.id);
    expect(ids).toContain(live.sessionId);
    expect(ids).not.toContain(old.sessionId);
  });

  test('when the secret is shorter than 32 characters, then the service refuses to start', () => {
    expect(() => createSessionService({ db, secret: 'too-short' })).toThrow('at least 32 characters');
  });
});

/**
 * A session start that meets a suspension or an erasure still in its transaction: it must wait
 * for the account row and decide by what was committed, not by what it read before. PostgreSQL
 * only: PGlite has one connection, so nothing runs beside a transaction.
 */
describe('session start racing a suspension or an erasure, on PostgreSQL', () => {
  let testDb: TestDatabase;
  let db: Database;
  let sessions: SessionService;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    db = await testDb.open();
    await migrateKeys(db);
    sessions = createSessionService({ db, secret: SECRET });
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.destroy();
  });

  /** Runs `change` in a transaction, starts a session of `accountId` once it has, and commits once the start waits for a lock. */
  async function startDuring(accountId: number, change: (tx: Queryable) => Promise<unknown>): Promise<unknown> {
    let changed!: () => void;
    let commit!: () => void;
    const changeMade = new Promise<void>((resolve) => (changed = resolve));
    const committable = new Promise<void>((resolve) => (commit = resolve));
    const transaction = db.transaction(async (tx) => {
      await change(tx);
      changed();
      await committable;
    });
    await changeMade;
    const started = sessions.start(accountId).then(
      () => undefined,
      (e: unknown) => e,
    );
    await until('the session start to wait for the account row', async () => {
      const [row] = await db.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return row!.waiting >= 1;
    });
    commit();
    await transaction;
    return started;
  }

  test('when a suspension commits while the start waits, then the start is 403 and leaves no live session', async () => {
    const accountId = await insertAccount(db);
    const err = await startDuring(accountId, async (tx) => {
      // As AccountAdmin.suspend does it: the row locked, the status changed, the sessions ended.
      await tx.query(`SELECT status FROM accounts.accounts WHERE id = $1 FOR UPDATE`, [accountId]);
      await tx.query(`UPDATE accounts.accounts SET status = 'suspended', suspended_at = now() WHERE id = $1`, [accountId]);
      await tx.query(`UPDATE accounts.sessions SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL`, [accountId]);
    });
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toBody()).toEqual({ code: 'forbidden', message: 'This account is suspended; contact support.', status: 403 });
    expect(await db.query('SELECT id FROM accounts.sessions WHERE account_id = $1 AND revoked_at IS NULL', [accountId])).toEqual([]);
  });

  test('when an erasure commits while the start waits, then the start is 401 as for an unknown email, not a foreign-key error', async () => {
    const accountId = await insertAccount(db);
    const err = await startDuring(accountId, (tx) => tx.query('DELETE FROM accounts.accounts WHERE id = $1', [accountId]));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toBody()).toEqual({ code: 'unauthorized', message: 'Email or password is incorrect.', status: 401 });
    expect(await db.query('SELECT id FROM accounts.sessions WHERE account_id = $1', [accountId])).toEqual([]);
  });
});
