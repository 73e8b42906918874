import jwt from 'jsonwebtoken';
import type { Database } from '../../db/database';
import { createTestDatabase, insertAccount, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { migrateKeys } from '../../identity/migrations';
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
