import { randomBytes } from 'node:crypto';
import { ident, type Database, type Queryable } from '../db/database';
import { ApiError } from '../lib/api-error';
import { KEY_PREFIXES as PREFIXES } from '../lib/key-prefixes';
import { oneLineTextProblem, textProblemSentence } from '../lib/plain-text';
import { createKeyHasher } from './key-hash';
import { createKeyUsageLedger, laterOf } from './key-usage-ledger';
import { KEYS_SCHEMA } from './migrations';
import { ENVIRONMENTS, type Environment } from '../openapi/environments';
import type { RevocationBus } from './revocation-bus';
import type { AuditLog } from './audit-log';
import type { KeyChurnLimiter } from './key-churn-limiter';
import { sessionEnded } from './session-service';

/** Recognisable per environment (secret scanners, support), and a key works only in its own one. */
export const KEY_PREFIXES: Readonly<Record<Environment, string>> = PREFIXES;
/** 32 bytes = 256 bits of randomness, 43 base64url characters. */
export const KEY_RANDOM_BYTES = 32;
/** Random characters kept in the visible prefix (36 bits: enough to tell keys apart, far too few to guess one). */
export const VISIBLE_RANDOM_CHARS = 6;
export const KEY_NAME_MAX_LENGTH = 100;
export const MAX_EXPIRES_IN_DAYS = 3650;
/** Active keys (neither revoked nor expired) an account may hold unless the deps say otherwise. */
export const DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT = 20;

/** One character of a key's random part: base64url's alphabet. */
export const KEY_SECRET_CHAR = /[A-Za-z0-9_-]/;
const KEY_SHAPE = new RegExp(`^(?:${Object.values(KEY_PREFIXES).join('|')})${KEY_SECRET_CHAR.source}{43}$`);
/** A key id as minted (`key_` and 16 base64url characters): anything else names no key. */
export const KEY_ID_SHAPE = /^key_[A-Za-z0-9_-]{16}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
const MIN_SECRET_LENGTH = 32;

export type VerifyFailureCode = 'MALFORMED' | 'NOT_FOUND' | 'REVOKED' | 'EXPIRED' | 'SUSPENDED' | 'WRONG_ENVIRONMENT';

/** Business outcomes of verification; infrastructure failures are thrown instead. */
export type VerifyResult =
  | { valid: true; keyId: string; accountId: number; environment: Environment; expiresAt: Date | null; plan: string }
  | { valid: false; code: VerifyFailureCode };

/** What the store knows about a key, looked up by its hash. Never contains the secret. */
export interface KeyRecord {
  keyId: string;
  accountId: number;
  environment: Environment;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The owner's account is suspended: the key is refused until it is reinstated. */
  suspended: boolean;
  /** The owner's plan, by name (its limits come from the plan book). */
  plan: string;
}

export interface IssueKeyInput {
  name: string;
  environment?: string;
  /** Whole days from now; null or absent: the key does not expire. */
  expiresInDays?: number | null;
}

/** What is known of a key from the moment it is issued. */
interface KeyIdentity {
  id: string;
  name: string;
  prefix: string;
  environment: Environment;
  createdAt: Date;
  expiresAt: Date | null;
}

export interface IssuedKey extends KeyIdentity {
  /** The full secret. Returned by `issue` only; it cannot be recovered afterwards. */
  key: string;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface KeySummary extends KeyIdentity {
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  status: KeyStatus;
  /** Active and ending within EXPIRES_SOON_MS: the keys page shows a badge. */
  expiresSoon: boolean;
  /** The key's successor when it was rolled, and its predecessor when it came from a roll. */
  rolledTo: string | null;
  rolledFrom: string | null;
  usage: KeyUsage;
}

/** A key ending within this carries an "expires soon" badge. */
const EXPIRES_SOON_MS = 7 * DAY_MS;

/** Requests a key has authenticated, and how many of them went to deprecated operations. */
export interface KeyUsage {
  requests: number;
  deprecatedCalls: number;
  lastDeprecatedCallAt: Date | null;
}

export interface ApiKeyService {
  /**
   * 409 `conflict` when the account already holds its most active keys (a rolled key in its
   * overlap is one); 429 `rate_limited` when it has made its most new keys of the day.
   */
  issue(accountId: number, input: IssueKeyInput): Promise<IssuedKey>;
  /** Newest first, revoked and expired keys included (with their status). */
  list(accountId: number): Promise<KeySummary[]>;
  /**
   * A new secret for the key's name and environment; the old key keeps working for `overlap`,
   * then answers as expired. 409 for a revoked, expired or already rolled key, and, as `issue`,
   * when the account holds its most active keys and the overlap is not `none`; 429 as `issue`.
   */
  roll(accountId: number, keyId: string, overlap: RollOverlap): Promise<IssuedKey>;
  /** 404 `not_found` for unknown keys and other accounts' keys; revoking twice is fine. Ends every key of its roll chain. */
  revoke(accountId: number, keyId: string): Promise<void>;
  /** Uncached verification against the store (the gateway goes through `createKeyVerifier`). */
  verify(secret: string, environment: Environment): Promise<VerifyResult>;
  /** HMAC-SHA-256 of a key with the server secret, hex: the only form in which keys are stored. */
  hash(secret: string): string;
  findByHash(keyHash: string): Promise<KeyRecord | null>;
  /**
   * Notes that a key authenticated a request now, to a deprecated operation or not. Kept in
   * memory and written in batches, never one UPDATE per request.
   */
  recordUse(keyId: string, deprecated: boolean): void;
  /** Adds pending counts and last-used times to the table with one UPDATE. */
  flushUsage(): Promise<void>;
  /** Stops the flush timer and writes what is pending. */
  close(): Promise<void>;
}

export interface ApiKeyServiceDeps {
  db: Database;
  /** Server secret for the keyed hash, at least 32 characters. Changing it invalidates every key. */
  hashSecret: string;
  /** Told about every revocation so key caches drop the key. */
  revocations: RevocationBus;
  /** Where the owner's key creations and revocations are recorded. */
  audit: AuditLog;
  /** Active keys an account may hold; issuing one more is a 409 `conflict`. Default 20. */
  maxActiveKeysPerAccount?: number;
  /** Counts each key about to be created or rolled, per account; absent, key churn is not limited. */
  churn?: KeyChurnLimiter;
  now?: () => Date;
  /** How often pending usage (counts, last-used times) is written. Default 5000 ms. */
  flushIntervalMs?: number;
  /** Called when a background flush fails (the pending usage is kept and retried). */
  onFlushError?: (err: unknown) => void;
}

/** Cheap shape check, no I/O: the environment a well-formed key claims, or null. */
export function parseApiKey(secret: unknown): { environment: Environment } | null {
  if (typeof secret !== 'string' || !KEY_SHAPE.test(secret)) return null;
  return { environment: secret.startsWith(KEY_PREFIXES.production) ? 'production' : 'staging' };
}

/** Applies revocation, expiry and environment to what the store said. Pure, so caches can re-run it on every hit. */
export function evaluateKey(record: KeyRecord | null, environment: Environment, now: Date): VerifyResult {
  if (!record) return { valid: false, code: 'NOT_FOUND' };
  if (record.revokedAt) return { valid: false, code: 'REVOKED' };
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) return { valid: false, code: 'EXPIRED' };
  if (record.suspended) return { valid: false, code: 'SUSPENDED' };
  if (record.environment !== environment) return { valid: false, code: 'WRONG_ENVIRONMENT' };
  return { valid: true, keyId: record.keyId, accountId: record.accountId, environment: record.environment, expiresAt: record.expiresAt, plan: record.plan };
}

export function keyStatus(key: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): KeyStatus {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

function readName(value: unknown): string {
  // NFC, like the trim: a key name is the portal's own data, never forwarded, and its length should count what shows.
  const name = typeof value === 'string' ? value.trim().normalize('NFC') : '';
  const length = [...name].length;
  if (length < 1 || length > KEY_NAME_MAX_LENGTH) {
    throw new ApiError('invalid_request', `name must be a string of 1 to ${KEY_NAME_MAX_LENGTH} characters.`);
  }
  const problem = oneLineTextProblem(name);
  if (problem) throw new ApiError('invalid_request', `name ${textProblemSentence(problem)}.`);
  return name;
}

function readEnvironment(value: unknown): Environment {
  if (value === undefined) return 'production';
  if (!(ENVIRONMENTS as readonly unknown[]).includes(value)) {
    throw new ApiError('invalid_request', `environment must be ${ENVIRONMENTS.map((e) => `"${e}"`).join(' or ')}.`);
  }
  return value as Environment;
}

function readExpiresInDays(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_EXPIRES_IN_DAYS) {
    throw new ApiError('invalid_request', `expiresInDays must be an integer from 1 to ${MAX_EXPIRES_IN_DAYS}.`);
  }
  return value;
}

/** A new secret, its visible prefix and its id: only the hash of the secret is ever stored. */
function mintKey(environment: Environment): { id: string; key: string; prefix: string } {
  const random = randomBytes(KEY_RANDOM_BYTES).toString('base64url');
  return {
    id: `key_${randomBytes(12).toString('base64url')}`,
    key: KEY_PREFIXES[environment] + random,
    prefix: KEY_PREFIXES[environment] + random.slice(0, VISIBLE_RANDOM_CHARS),
  };
}

/** How long a rolled key keeps working beside its successor. */
const ROLL_OVERLAPS = { none: 0, '1h': 60 * 60 * 1000, '24h': DAY_MS, '7d': 7 * DAY_MS } as const;
export type RollOverlap = keyof typeof ROLL_OVERLAPS;

function readOverlap(value: unknown): number {
  if (typeof value !== 'string' || !Object.hasOwn(ROLL_OVERLAPS, value)) {
    throw new ApiError('invalid_request', `overlap must be ${Object.keys(ROLL_OVERLAPS).map((o) => `"${o}"`).join(', ')}.`);
  }
  return ROLL_OVERLAPS[value as RollOverlap];
}

/** A key that is not the account's and one that does not exist look the same. */
export const keyNotFound = () => new ApiError('not_found', 'No API key with this id exists in your account.');

/** `keyId` when it is shaped like a key id; 404 otherwise, as for a key the account does not hold. */
export function checkedKeyId(keyId: unknown): string {
  if (typeof keyId !== 'string' || !KEY_ID_SHAPE.test(keyId)) throw keyNotFound();
  return keyId;
}

const suspendedAccount = () => new ApiError('forbidden', 'This account is suspended; it cannot create keys.');

/** What frees room for a create, and for a roll with an overlap. */
const CREATE_ADVICE = 'revoke one to create another';
const ROLL_ADVICE = 'roll with no overlap, or revoke a key first';
const tooManyKeys = (max: number, advice: string) =>
  new ApiError('conflict', `This account already has ${max} active ${max === 1 ? 'key' : 'keys'}, the most it may hold; ${advice}.`);

interface KeyRow {
  id: string;
  account_id: number;
  name: string;
  environment: Environment;
  prefix: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  requests: number;
  deprecated_calls: number;
  last_deprecated_call_at: Date | null;
  rolled_to: string | null;
  rolled_from: string | null;
}


export const dateOrNull = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

export function createApiKeyService(deps: ApiKeyServiceDeps): ApiKeyService {
  const { db, revocations, audit } = deps;
  const now = deps.now ?? (() => new Date());
  const flushIntervalMs = deps.flushIntervalMs ?? 5000;
  const maxActiveKeys = deps.maxActiveKeysPerAccount ?? DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT;
  if (!Number.isSafeInteger(maxActiveKeys) || maxActiveKeys < 1) throw new Error('The most active keys per account must be a whole number of at least 1');
  const onFlushError = deps.onFlushError ?? (() => {});
  if (typeof deps.hashSecret !== 'string' || deps.hashSecret.length < MIN_SECRET_LENGTH) {
    throw new Error(`The key hash secret must be at least ${MIN_SECRET_LENGTH} characters long`);
  }
  const table = `${ident(KEYS_SCHEMA)}.api_keys`;
  const accounts = `${ident(KEYS_SCHEMA)}.accounts`;
  const hash = createKeyHasher(deps.hashSecret);

  const findByHash = async (keyHash: string): Promise<KeyRecord | null> => {
    const [row] = await db.query<KeyRow & { status: string; plan: string }>(
      `SELECT k.id, k.account_id, k.environment, k.expires_at, k.revoked_at, a.status, a.plan
       FROM ${table} k JOIN ${accounts} a ON a.id = k.account_id WHERE k.hash = $1`,
      [keyHash],
    );
    if (!row) return null;
    return {
      keyId: row.id,
      accountId: Number(row.account_id),
      environment: row.environment,
      expiresAt: dateOrNull(row.expires_at),
      revokedAt: dateOrNull(row.revoked_at),
      suspended: row.status === 'suspended',
      plan: row.plan,
    };
  };

  const usage = createKeyUsageLedger({ db, table, now, flushIntervalMs, onFlushError });

  /**
   * Locks the account row, so parallel issues and rolls for one account count one after another
   * (NO KEY lets sessions still reference it), and refuses an erased or a suspended account.
   */
  async function lockAccount(tx: Queryable, accountId: number): Promise<void> {
    const [account] = await tx.query<{ status: string }>(`SELECT status FROM ${accounts} WHERE id = $1 FOR NO KEY UPDATE`, [accountId]);
    // Erased since the session was resolved: the session went with it.
    if (!account) throw sessionEnded();
    if (account.status === 'suspended') throw suspendedAccount();
  }

  /**
   * Refuses one more key when the account already holds its most working keys: a rolled key still
   * in its overlap works, so it counts. `advice` says what frees room.
   */
  async function ensureRoom(tx: Queryable, accountId: number, at: Date, advice: string): Promise<void> {
    const [held] = await tx.query<{ active: number }>(
      `SELECT count(*)::int AS active FROM ${table}
       WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
      [accountId, at],
    );
    if (held!.active >= maxActiveKeys) throw tooManyKeys(maxActiveKeys, advice);
  }

  /**
   * Runs a create or a roll; its `countNewKey`, called once nothing else refuses the change, takes
   * one point of the account's churn allowance, which is given back if the change then fails.
   */
  async function asNewKey<T>(accountId: number, change: (countNewKey: () => Promise<void>) => Promise<T>): Promise<T> {
    let giveBack: (() => Promise<void>) | undefined;
    try {
      return await change(async () => {
        giveBack = await deps.churn?.take(accountId);
      });
    } catch (err) {
      // Best effort: a point the store fails to give back only makes the allowance stricter.
      await giveBack?.().catch(() => {});
      throw err;
    }
  }

  async function insertKey(tx: Queryable, accountId: number, key: IssuedKey): Promise<void> {
    await tx.query(
      `INSERT INTO ${table} (id, account_id, name, environment, prefix, hash, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [key.id, accountId, key.name, key.environment, key.prefix, hash(key.key), key.createdAt, key.expiresAt],
    );
  }

  return {
    async issue(accountId, input) {
      const name = readName(input.name);
      const environment = readEnvironment(input.environment);
      const expiresInDays = readExpiresInDays(input.expiresInDays);
      const createdAt = now();
      const minted = mintKey(environment);
      const issued: IssuedKey = { ...minted, name, environment, createdAt, expiresAt: expiresInDays === null ? null : new Date(createdAt.getTime() + expiresInDays * DAY_MS) };
      await asNewKey(accountId, (countNewKey) =>
        db.transaction(async (tx) => {
          await lockAccount(tx, accountId);
          await ensureRoom(tx, accountId, createdAt, CREATE_ADVICE);
          await countNewKey();
          await insertKey(tx, accountId, issued);
          await audit.record(
            { actor: `account:${accountId}` },
            { action: 'key.created', targetType: 'key', targetId: issued.id, accountId, details: { name, environment, expiresAt: issued.expiresAt?.toISOString() ?? null } },
            tx,
          );
        }),
      );
      return issued;
    },

    async roll(accountId, keyId, overlap) {
      checkedKeyId(keyId);
      const overlapMs = readOverlap(overlap);
      const at = now();
      const { issued, oldHash } = await asNewKey(accountId, (countNewKey) =>
        db.transaction(async (tx) => {
          await lockAccount(tx, accountId);
          const [old] = await tx.query<KeyRow & { hash: string; rolled_to: string | null }>(
            `SELECT id, name, environment, created_at, expires_at, revoked_at, hash, rolled_to FROM ${table} WHERE id = $1 AND account_id = $2 FOR UPDATE`,
            [keyId, accountId],
          );
          if (!old) throw keyNotFound();
          const oldExpiresAt = dateOrNull(old.expires_at);
          const status = keyStatus({ revokedAt: dateOrNull(old.revoked_at), expiresAt: oldExpiresAt }, at);
          if (status !== 'active') throw new ApiError('conflict', `This key is ${status}; only an active key can be rolled.`);
          if (old.rolled_to) throw new ApiError('conflict', 'This key has already been rolled; roll its successor instead.');
          // With no overlap the old key ends as the new one starts (expiry `at` counts as expired): the
          // roll replaces it and needs no room, even where a lowered cap leaves the account above it.
          if (overlapMs > 0) await ensureRoom(tx, accountId, at, ROLL_ADVICE);
          await countNewKey();
          // The successor lives as long as its predecessor was meant to, counted from now.
          const lifetimeMs = oldExpiresAt === null ? null : oldExpiresAt.getTime() - new Date(old.created_at).getTime();
          const issued: IssuedKey = { ...mintKey(old.environment), name: old.name, environment: old.environment, createdAt: at, expiresAt: lifetimeMs === null ? null : new Date(at.getTime() + lifetimeMs) };
          await insertKey(tx, accountId, issued);
          const ends = new Date(Math.min(at.getTime() + overlapMs, oldExpiresAt?.getTime() ?? Infinity));
          await tx.query(`UPDATE ${table} SET rolled_to = $2, rolled_at = $3, expires_at = $4 WHERE id = $1`, [old.id, issued.id, at, ends]);
          await audit.record({ actor: `account:${accountId}` }, { action: 'key.rolled', targetType: 'key', targetId: old.id, accountId, details: { to: issued.id, overlap, oldKeyExpiresAt: ends.toISOString() } }, tx);
          return { issued, oldHash: old.hash };
        }),
      );
      // Caches hold the old key's verdict without an expiry: they must read the new one.
      await revocations.publish(oldHash);
      return issued;
    },

    async list(accountId) {
      // Stored usage plus what this process has not written yet (see KeyUsageLedger.readWithUnwritten).
      const { result: rows, unwritten: unwrittenOf } = await usage.readWithUnwritten(() =>
        db.query<KeyRow>(
          `SELECT k.id, k.name, k.environment, k.prefix, k.created_at, k.expires_at, k.last_used_at, k.revoked_at,
                  k.requests, k.deprecated_calls, k.last_deprecated_call_at, k.rolled_to,
                  (SELECT p.id FROM ${table} p WHERE p.rolled_to = k.id) AS rolled_from
           FROM ${table} k WHERE k.account_id = $1 ORDER BY k.created_at DESC, k.id`,
          [accountId],
        ),
      );
      const at = now();
      return rows.map((row) => {
        const expiresAt = dateOrNull(row.expires_at);
        const revokedAt = dateOrNull(row.revoked_at);
        const unwritten = unwrittenOf(row.id);
        const lastUsedAt = laterOf(dateOrNull(row.last_used_at), unwritten?.usedAt);
        const status = keyStatus({ revokedAt, expiresAt }, at);
        return {
          id: row.id,
          name: row.name,
          prefix: row.prefix,
          environment: row.environment,
          createdAt: new Date(row.created_at),
          expiresAt,
          lastUsedAt,
          revokedAt,
          status,
          expiresSoon: status === 'active' && expiresAt !== null && expiresAt.getTime() - at.getTime() <= EXPIRES_SOON_MS,
          rolledTo: row.rolled_to,
          rolledFrom: row.rolled_from,
          usage: {
            requests: Number(row.requests) + (unwritten?.requests ?? 0),
            deprecatedCalls: Number(row.deprecated_calls) + (unwritten?.deprecatedCalls ?? 0),
            lastDeprecatedCallAt: laterOf(dateOrNull(row.last_deprecated_call_at), unwritten?.deprecatedAt),
          },
        };
      });
    },

    async revoke(accountId, keyId) {
      checkedKeyId(keyId);
      const at = now();
      // The key and every key of its roll chain (those it was rolled from and to, however many rolls
      // back or on) end together: a key two rolls back may still be in its overlap. Their rows are
      // locked in key order, with the UPDATE's own lock, as the usage flush locks them.
      const rows = await db.transaction(async (tx) => {
        const chain = await tx.query<{ id: string; hash: string; revoked_at: Date | null }>(
          `WITH RECURSIVE back(id) AS (
             SELECT id FROM ${table} WHERE id = $1 AND account_id = $2
             UNION SELECT k.id FROM ${table} k JOIN back b ON k.rolled_to = b.id WHERE k.account_id = $2
           ), ahead(id) AS (
             SELECT id FROM ${table} WHERE id = $1 AND account_id = $2
             UNION SELECT k.rolled_to FROM ${table} k JOIN ahead o ON k.id = o.id WHERE k.rolled_to IS NOT NULL AND k.account_id = $2
           )
           SELECT id, hash, revoked_at FROM ${table}
           WHERE account_id = $2 AND id IN (SELECT id FROM back UNION SELECT id FROM ahead)
           ORDER BY id FOR NO KEY UPDATE`,
          [keyId, accountId],
        );
        if (!chain.some((row) => row.id === keyId)) throw keyNotFound();
        for (const row of chain) {
          if (row.revoked_at !== null) continue;
          await tx.query(`UPDATE ${table} SET revoked_at = $2 WHERE id = $1`, [row.id, at]);
          const details = row.id === keyId ? { via: 'portal' } : { via: 'portal', with: keyId };
          await audit.record({ actor: `account:${accountId}` }, { action: 'key.revoked', targetType: 'key', targetId: row.id, accountId, details }, tx);
        }
        return chain;
      });
      // Published also for an already revoked key: harmless, and it repairs a publish that failed earlier.
      for (const row of rows) await revocations.publish(row.hash);
    },

    async verify(secret, environment) {
      if (!parseApiKey(secret)) return { valid: false, code: 'MALFORMED' };
      return evaluateKey(await findByHash(hash(secret)), environment, now());
    },

    hash,
    findByHash,

    recordUse: usage.recordUse,

    flushUsage: usage.flush,

    close: usage.close,
  };
}
