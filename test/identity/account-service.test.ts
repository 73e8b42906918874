import type { Database } from '../../db/database';
import { migrate } from '../../db/migrate';
import { ApiError } from '../../lib/api-error';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../support/databases';
import { createAccountService, type AccountService } from '../../identity/account-service';
import { KEYS_SCHEMA, keysMigrations, migrateKeys } from '../../identity/migrations';
import { createPasswordHasher } from '../../identity/password';

const PASSWORD = 'correct horse battery staple';

async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe.each(testDatabaseKinds())('account service on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let accounts: AccountService;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    accounts = createAccountService({ db });
  });

  afterAll(async () => {
    await db.close();
    await testDb.destroy();
  });

  test('when someone signs up, then the email is stored lower-cased and trimmed and only a scrypt hash of the password is kept', async () => {
    const account = await accounts.signup('  Grace@Example.COM ', PASSWORD);
    expect(account).toEqual({ id: expect.any(Number), email: 'grace@example.com', createdAt: expect.any(Date) });
    const [row] = await db.query<{ email: string; password_hash: string }>('SELECT email, password_hash FROM accounts.accounts WHERE id = $1', [account.id]);
    expect(row!.email).toBe('grace@example.com');
    expect(row!.password_hash).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(row!.password_hash).not.toContain(PASSWORD);
    await expect(accounts.get(account.id)).resolves.toEqual(account);
  });

  test('when the email is taken, in any case, then sign-up is a 409 conflict', async () => {
    const err = await apiErrorOf(accounts.signup('GRACE@example.com', 'another good password'));
    expect(err.toBody()).toEqual({ code: 'conflict', message: 'An account with this email already exists.', status: 409 });
  });

  test('when the password breaks the policy, then sign-up is a 400 weak_password naming the rule', async () => {
    const err = await apiErrorOf(accounts.signup('weak@example.com', 'short'));
    expect(err.toBody()).toEqual({ code: 'weak_password', message: 'Password must be at least 10 characters long.', status: 400 });
    const sameAsEmail = await apiErrorOf(accounts.signup('weak@example.com', 'WEAK@example.com'));
    expect(sameAsEmail.message).toBe('Password must not be the same as the email address.');
  });

  test.each([
    ['empty', ''],
    ['without @', 'no-at-sign'],
    ['with two @', 'two@@example.com'],
    ['with a space', 'spaces in@example.com'],
    ['without a dot in the domain', 'nodot@example'],
    ['longer than 254 characters', `${'a'.repeat(250)}@example.com`],
    // PostgreSQL refuses a NUL in text: without the check this was a 500.
    ['with a NUL', 'nul\u0000@example.com'],
    ['with another control character', 'bell\u0007@example.com'],
    ['with an unpaired surrogate', 'half\ud800@example.com'],
  ])(
    'when the email is %s, then sign-up is a 400 invalid_request',
    async (_label, email) => {
      const err = await apiErrorOf(accounts.signup(email, PASSWORD));
      expect(err.toBody()).toEqual({ code: 'invalid_request', message: 'email must be a valid email address of at most 254 characters.', status: 400 });
    },
  );

  test.each([
    ['a zero-width space', 'ad\u200Ba@example.com'],
    ['a zero-width joiner', 'ada\u200D@example.com'],
    ['a right-to-left override', 'moc.elpmaxe@\u202Eada@example.com'],
    ['an isolate', '\u2066ada@example.com'],
    ['a right-to-left mark', 'ada\u200F@example.com'],
    ['a soft hyphen', 'a\u00ADda@example.com'],
    ['a byte order mark', 'ada\uFEFF@example.com'],
    ['a Hangul filler', 'ada\u3164@example.com'],
  ])('when the email holds %s, then sign-up is a 400 invalid_request that says so', async (_label, email) => {
    const err = await apiErrorOf(accounts.signup(email, PASSWORD));
    expect(err.toBody()).toEqual({ code: 'invalid_request', message: 'email must not contain invisible or bidirectional control characters.', status: 400 });
  });

  test('when an email is signed up in NFC and again in NFD, then the second is a 409 conflict, and either spelling signs in', async () => {
    const composed = 'ren\u00e9e@example.com';
    const decomposed = 'rene\u0301e@example.com';
    const account = await accounts.signup(decomposed.toUpperCase(), PASSWORD);
    expect(account.email).toBe(composed);
    const err = await apiErrorOf(accounts.signup(composed, 'another good password'));
    expect(err.toBody()).toEqual({ code: 'conflict', message: 'An account with this email already exists.', status: 409 });
    await expect(accounts.authenticate(composed, PASSWORD)).resolves.toEqual(account);
    await expect(accounts.authenticate(decomposed, PASSWORD)).resolves.toEqual(account);
    const rows = await db.query<{ email: string }>('SELECT email FROM accounts.accounts WHERE email IN ($1, $2)', [composed, decomposed]);
    expect(rows).toEqual([{ email: composed }]);
  });

  test('when a database holds emails in NFD, then migrating stores them in NFC unless another account holds that spelling', async () => {
    const older = await createTestDatabase(kind);
    const olderDb = await older.open();
    try {
      await migrate(olderDb, KEYS_SCHEMA, keysMigrations.slice(0, 2));
      const insert = async (email: string) =>
        (await olderDb.query<{ id: number }>(`INSERT INTO accounts.accounts (email, password_hash) VALUES ($1, 'x') RETURNING id`, [email]))[0]!.id;
      const alone = await insert('jose\u0301@example.com');
      const taken = await insert('rene\u0301@example.com');
      const holder = await insert('ren\u00e9@example.com');
      const firstSpelling = await insert('e\u0301\u0323@example.com');
      const secondSpelling = await insert('e\u0323\u0301@example.com');
      const ascii = await insert('plain@example.com');
      await migrateKeys(olderDb);
      const rows = await olderDb.query<{ id: number; email: string }>('SELECT id, email FROM accounts.accounts ORDER BY id');
      expect(rows.map((r) => [Number(r.id), r.email])).toEqual([
        [alone, 'jos\u00e9@example.com'],
        [taken, 'rene\u0301@example.com'],
        [holder, 'ren\u00e9@example.com'],
        [firstSpelling, '\u1eb9\u0301@example.com'],
        [secondSpelling, 'e\u0323\u0301@example.com'],
        [ascii, 'plain@example.com'],
      ]);
    } finally {
      await olderDb.close();
      await older.destroy();
    }
  });

  test('when the right password is given, in any email case, then authenticate returns the account', async () => {
    const account = await accounts.authenticate(' GRACE@EXAMPLE.COM', PASSWORD);
    expect(account?.email).toBe('grace@example.com');
  });

  test('when the password is wrong or the email unknown, then authenticate returns null', async () => {
    await expect(accounts.authenticate('grace@example.com', 'not the password')).resolves.toBeNull();
    await expect(accounts.authenticate('nobody@example.com', PASSWORD)).resolves.toBeNull();
    await expect(accounts.authenticate('not an email', PASSWORD)).resolves.toBeNull();
    await expect(accounts.authenticate('grace@example.com\u0000', PASSWORD)).resolves.toBeNull();
  });

  test('when an account id is unknown or invalid, then get returns null', async () => {
    await expect(accounts.get(999_999)).resolves.toBeNull();
    await expect(accounts.get(-1)).resolves.toBeNull();
    await expect(accounts.get(1.5)).resolves.toBeNull();
  });

  test('when a password hash was made with weaker parameters, then a successful login upgrades it', async () => {
    const legacy = createAccountService({ db, passwords: createPasswordHasher({ cost: { N: 2 ** 12, r: 8, p: 1 } }) });
    const account = await legacy.signup('legacy@example.com', PASSWORD);
    await expect(accounts.authenticate('legacy@example.com', PASSWORD)).resolves.toEqual(account);
    const [row] = await db.query<{ password_hash: string }>('SELECT password_hash FROM accounts.accounts WHERE id = $1', [account.id]);
    expect(row!.password_hash.startsWith('scrypt$131072$8$1$')).toBe(true);
    await expect(accounts.authenticate('legacy@example.com', PASSWORD)).resolves.toEqual(account);
  });
});
