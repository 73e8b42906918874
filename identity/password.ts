import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ApiError } from '../lib/api-error';

/** scrypt work factors. OWASP Password Storage Cheat Sheet: N=2^17, r=8, p=1. */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const OWASP_SCRYPT_COST: Readonly<ScryptCost> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Bounds on parameters read back from stored hashes, so a tampered row cannot ask for gigabytes. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/** scrypt needs 128·N·r bytes (plus a little); Node refuses above `maxmem`, default 32 MiB. */
function maxmemFor(cost: ScryptCost): number {
  return 128 * cost.N * cost.r * 2 + 128 * cost.r * cost.p;
}

function derive(password: string, salt: Buffer, keyLength: number, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: maxmemFor(cost) };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

interface ParsedHash {
  cost: ScryptCost;
  salt: Buffer;
  key: Buffer;
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 1 && (n & (n - 1)) === 0;
}

function parseEncoded(encoded: string): ParsedHash {
  const parts = encoded.split('$');
  const [scheme, n, r, p, salt, key] = parts;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (
    parts.length !== 6 ||
    scheme !== 'scrypt' ||
    !isPowerOfTwo(cost.N) ||
    cost.N > MAX_N ||
    !Number.isInteger(cost.r) ||
    cost.r < 1 ||
    cost.r > MAX_R ||
    !Number.isInteger(cost.p) ||
    cost.p < 1 ||
    cost.p > MAX_P
  ) {
    throw new Error('Stored password hash is not a valid scrypt hash');
  }
  const saltBytes = Buffer.from(salt ?? '', 'base64url');
  const keyBytes = Buffer.from(key ?? '', 'base64url');
  if (saltBytes.length < SALT_BYTES || keyBytes.length < 16) throw new Error('Stored password hash is not a valid scrypt hash');
  return { cost, salt: saltBytes, key: keyBytes };
}

/**
 * At most `max` derivations at once (each scrypt at OWASP cost holds 128 MiB and a libuv thread),
 * and at most `maxQueued` waiting: past that a caller is answered 503 at once rather than kept
 * waiting behind a flood of guesses.
 */
function createGate(max: number, maxQueued: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async function gated<T>(fn: () => Promise<T>): Promise<T> {
    if (running >= max) {
      if (waiting.length >= maxQueued) {
        throw new ApiError('service_unavailable', 'Too many passwords are being checked right now. Try again in 1 second.', { headers: { 'Retry-After': '1' } });
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else running++;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

export interface PasswordHasher {
  /** `scrypt$N$r$p$salt$hash` (salt and hash base64url). */
  hash(password: string): Promise<string>;
  /** Constant-time comparison; throws only when `encoded` is not a hash this module wrote. */
  verify(password: string, encoded: string): Promise<boolean>;
  /** Spends the time of a real `verify` and returns false: used for unknown accounts. */
  verifyAgainstDummy(password: string): Promise<false>;
  /** True when `encoded` was made with weaker parameters than the current cost. */
  needsRehash(encoded: string): boolean;
}

export interface PasswordHasherOptions {
  cost?: ScryptCost;
  /** Concurrent derivations; more wait in line. Default 2 (memory: 128 MiB each at OWASP cost). */
  maxConcurrent?: number;
  /** Derivations that may wait in line; more are refused with 503 `service_unavailable`. Default 8. */
  maxQueued?: number;
}

export function createPasswordHasher(options: PasswordHasherOptions = {}): PasswordHasher {
  const cost = Object.freeze({ ...(options.cost ?? OWASP_SCRYPT_COST) });
  const maxConcurrent = options.maxConcurrent ?? 2;
  const maxQueued = options.maxQueued ?? 8;
  if (!isPowerOfTwo(cost.N) || cost.N > MAX_N || cost.r < 1 || cost.r > MAX_R || cost.p < 1 || cost.p > MAX_P) {
    throw new Error(`Invalid scrypt cost ${JSON.stringify(cost)}`);
  }
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new Error('maxConcurrent must be a positive integer');
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new Error('maxQueued must be a non-negative integer');
  const gated = createGate(maxConcurrent, maxQueued);
  let dummy: Promise<string> | undefined;

  const hash = async (password: string): Promise<string> => {
    const salt = randomBytes(SALT_BYTES);
    const key = await gated(() => derive(password, salt, KEY_BYTES, cost));
    return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
  };

  const verify = async (password: string, encoded: string): Promise<boolean> => {
    const parsed = parseEncoded(encoded);
    const actual = await gated(() => derive(password, parsed.salt, parsed.key.length, parsed.cost));
    return timingSafeEqual(actual, parsed.key);
  };

  return {
    hash,
    verify,
    async verifyAgainstDummy(password) {
      // A real hash of a random secret, made once, with the current parameters: same work as a real verify.
      // A refused or failed first hash is not kept: the next unknown-email attempt makes it again.
      dummy ??= hash(randomBytes(32).toString('base64url')).catch((err: unknown) => {
        dummy = undefined;
        throw err;
      });
      await verify(password, await dummy);
      return false;
    },
    needsRehash(encoded) {
      const parsed = parseEncoded(encoded);
      return parsed.cost.N < cost.N || parsed.cost.r < cost.r || parsed.cost.p < cost.p || parsed.key.length < KEY_BYTES;
    },
  };
}

/** A small list of passwords that appear at the top of every breach corpus and meet the length rule. */
const COMMON_PASSWORDS = new Set([
  '0123456789',
  '0987654321',
  '1111111111',
  '1234567890',
  '12345678910',
  '123456789a',
  '123456789q',
  '1234qwerasdf',
  '1q2w3e4r5t',
  '1q2w3e4r5t6y',
  '1qaz2wsx3edc',
  'a123456789',
  'abcdefghij',
  'abcd123456',
  'abc1234567',
  'administrator',
  'asdfghjkl1',
  'changeme123',
  'football123',
  'iloveyou12',
  'iloveyou123',
  'letmein123',
  'monkey1234',
  'p@ssw0rd123',
  'passw0rd123',
  'password01',
  'password12',
  'password123',
  'password1234',
  'password12345',
  'password1!',
  'passwordpassword',
  'q1w2e3r4t5',
  'q1w2e3r4t5y6',
  'qazwsxedc123',
  'qwerty1234',
  'qwerty12345',
  'qwerty123456',
  'qwertyuiop',
  'qwertyuiop1',
  'qwertyuiop123',
  'superman123',
  'trustno1234',
  'welcome123',
  'welcome1234',
  'zaq12wsxcde',
  'zxcvbnm123',
  'zxcvbnm1234',
]);

/**
 * The password policy (NIST SP 800-63B style: length, not common, not the email).
 * Returns the reason a password is refused, written for the person choosing it, or null.
 */
export function passwordPolicyViolation(password: string, email?: string): string | null {
  const normalized = password.normalize('NFC');
  const length = [...normalized].length;
  if (length < PASSWORD_MIN_LENGTH) return `Password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (length > PASSWORD_MAX_LENGTH) return `Password must be at most ${PASSWORD_MAX_LENGTH} characters long.`;
  const lower = normalized.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || /^(.)\1*$/u.test(lower)) {
    return 'Password is too common or too easy to guess; choose a longer, less predictable one.';
  }
  if (email !== undefined && lower.trim() === email.trim().toLowerCase()) {
    return 'Password must not be the same as the email address.';
  }
  return null;
}
