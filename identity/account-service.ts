import { ident, type Database } from '../db/database';
import { ApiError } from '../lib/api-error';
import { hasInvisibleCharacters, isOneLineText } from '../lib/plain-text';
import { KEYS_SCHEMA } from './migrations';
import { createPasswordHasher, passwordPolicyViolation, type PasswordHasher } from './password';

export interface Account {
  id: number;
  email: string;
  createdAt: Date;
}

export interface AccountService {
  /** Creates an account. 400 `invalid_request` / `weak_password`, 409 `conflict` when the email is taken. */
  signup(email: string, password: string): Promise<Account>;
  /**
   * The account when email and password match, otherwise null; takes the same time for unknown
   * emails. 403 `forbidden` for a suspended account, told only to whoever knows its password.
   */
  authenticate(email: string, password: string): Promise<Account | null>;
  get(id: number): Promise<Account | null>;
}

export interface AccountServiceDeps {
  db: Database;
  /** Defaults to scrypt at OWASP cost. */
  passwords?: PasswordHasher;
}

export const EMAIL_MAX_LENGTH = 254;
// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is proven by mail, not by regex.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** Trimmed, lower-cased and in Unicode NFC (one spelling of "é", not two): the form accounts are stored and looked up by. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase().normalize('NFC');
}

export function isValidEmail(normalized: string): boolean {
  return normalized.length <= EMAIL_MAX_LENGTH && EMAIL_SHAPE.test(normalized) && isOneLineText(normalized);
}

interface AccountRow {
  id: number;
  email: string;
  created_at: Date;
  password_hash: string;
  status?: string;
}

/** A sign-in with a wrong password and one with an unknown email look the same. */
export const wrongCredentials = () => new ApiError('unauthorized', 'Email or password is incorrect.');
export const accountSuspended = () => new ApiError('forbidden', 'This account is suspended; contact support.');

const toAccount = (row: AccountRow): Account => ({ id: Number(row.id), email: row.email, createdAt: new Date(row.created_at) });

export function createAccountService(deps: AccountServiceDeps): AccountService {
  const { db } = deps;
  const passwords = deps.passwords ?? createPasswordHasher();
  const table = `${ident(KEYS_SCHEMA)}.accounts`;

  return {
    async signup(rawEmail, password) {
      const email = normalizeEmail(rawEmail);
      // Zero-width and direction characters would make a second account that looks like the first.
      if (hasInvisibleCharacters(email)) throw new ApiError('invalid_request', 'email must not contain invisible or bidirectional control characters.');
      if (!isValidEmail(email)) throw new ApiError('invalid_request', 'email must be a valid email address of at most 254 characters.');
      const weakness = passwordPolicyViolation(password, email);
      if (weakness) throw new ApiError('weak_password', weakness);
      const passwordHash = await passwords.hash(password);
      const rows = await db.query<AccountRow>(
        `INSERT INTO ${table} (email, password_hash) VALUES ($1, $2)
         ON CONFLICT (email) DO NOTHING
         RETURNING id, email, created_at`,
        [email, passwordHash],
      );
      const row = rows[0];
      if (!row) throw new ApiError('conflict', 'An account with this email already exists.');
      return toAccount(row);
    },

    async authenticate(rawEmail, password) {
      const email = normalizeEmail(rawEmail);
      // A malformed email can match no account, so answering at once reveals nothing.
      if (!isValidEmail(email)) return null;
      const [row] = await db.query<AccountRow>(`SELECT id, email, created_at, password_hash, status FROM ${table} WHERE email = $1`, [email]);
      if (!row) return passwords.verifyAgainstDummy(password).then(() => null);
      if (!(await passwords.verify(password, row.password_hash))) return null;
      if (row.status === 'suspended') throw accountSuspended();
      if (passwords.needsRehash(row.password_hash)) {
        // Parameters were raised since this hash was made: upgrade it while we know the password.
        await db.query(`UPDATE ${table} SET password_hash = $2 WHERE id = $1`, [row.id, await passwords.hash(password)]);
      }
      return toAccount(row);
    },

    async get(id) {
      if (!Number.isSafeInteger(id) || id < 1) return null;
      const [row] = await db.query<AccountRow>(`SELECT id, email, created_at FROM ${table} WHERE id = $1`, [id]);
      return row ? toAccount(row) : null;
    },
  };
}
