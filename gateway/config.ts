import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { LOG_LEVELS } from '../lib/logger';
import { optionalSecret } from '../lib/optional-secret';
import { MIN_GATEWAY_TOKEN_LENGTH } from '../petstore/gateway-token';
import { DEFAULT_CACHE_MAX_BYTES } from './cache/list-cache';
import { DEFAULT_MAX_NEW_KEYS_PER_DAY } from '../identity/key-churn-limiter';

/**
 * The only reader of process.env. Parsed and validated once at start-up; every problem is
 * reported at once, naming the variable, and the process exits non-zero.
 */
const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || isUrl(v, protocols), { message: `must be a URL (${protocols.join(', ')})` });

function isUrl(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol.replace(':', ''));
  } catch {
    return false;
  }
}

const int = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

/** Who holds an admin token: the label names the holder in the audit trail (`admin:<label>`); the token itself is never shown. */
export interface AdminToken {
  readonly label: string;
  readonly token: string;
}

const ADMIN_TOKEN_LABEL = /^[a-z0-9_-]{1,32}$/;
const MIN_ADMIN_TOKEN_LENGTH = 32;
/** Printable ASCII without space, "," or ":", which separate the entries of a list. */
const ADMIN_TOKEN_CHARACTERS = /^[\x21-\x2b\x2d-\x39\x3b-\x7e]+$/;

/**
 * `ADMIN_TOKEN=<token>` (labelled `admin`) or `label:token,label2:token2` (rotation, one token per
 * operator). Problems name the entry by its position, never by its text: that text may be a token.
 */
const adminTokens = z
  .string()
  .optional()
  .transform((value, ctx): readonly AdminToken[] => {
    const text = value?.trim() ?? '';
    if (!text) return [];
    const single = !text.includes(':') && !text.includes(',');
    const entries = single ? [{ label: 'admin', token: text }] : text.split(',').map((entry) => {
      const colon = entry.indexOf(':');
      return colon === -1 ? { label: '', token: entry.trim() } : { label: entry.slice(0, colon).trim(), token: entry.slice(colon + 1).trim() };
    });
    const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
    entries.forEach(({ label, token }, i) => {
      const which = single ? 'the token' : `entry ${i + 1}`;
      if (!single && !ADMIN_TOKEN_LABEL.test(label)) problem(`${which} must be "label:token", the label 1 to 32 of a-z, 0-9, "_" and "-"`);
      if (token.length < MIN_ADMIN_TOKEN_LENGTH) problem(`${which}: the token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
      else if (!ADMIN_TOKEN_CHARACTERS.test(token)) problem(`${which}: the token must be printable ASCII without spaces, "," or ":"`);
    });
    const labels = entries.map((e) => e.label);
    if (new Set(labels).size !== labels.length) problem('each label may appear once');
    if (new Set(entries.map((e) => e.token)).size !== entries.length) problem('each token may appear once (one holder per token)');
    return Object.freeze(entries.map((e) => Object.freeze(e)));
  });
const secret = optionalSecret(32);
/** What a standalone store accepts as its PETSTORE_GATEWAY_TOKEN: the gateway refuses a token its store would. */
const upstreamToken = optionalSecret(MIN_GATEWAY_TOKEN_LENGTH);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(8080, 0, 65535),
  // Loopback unless told otherwise: the image and docker-compose.yml set HOST=0.0.0.0, where the container is the boundary.
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: optionalUrl(['postgres', 'postgresql']),
  REDIS_URL: optionalUrl(['redis', 'rediss']),
  REDIS_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/, 'letters, digits, ":", "_" or "-" only').default('asg:'),
  PRODUCTION_UPSTREAM: optionalUrl(['http', 'https']),
  STAGING_UPSTREAM: optionalUrl(['http', 'https']),
  PRODUCTION_UPSTREAM_TOKEN: upstreamToken,
  STAGING_UPSTREAM_TOKEN: upstreamToken,
  CACHE_TTL_SECONDS: int(30, 0, 86_400),
  CACHE_MAX_BYTES: int(DEFAULT_CACHE_MAX_BYTES, 65_536, 2 ** 40),
  RATE_LIMIT_PER_MINUTE: int(600, 1, 10_000_000),
  ANONYMOUS_RATE_LIMIT_PER_MINUTE: int(60, 1, 10_000_000),
  PASSWORD_ATTEMPTS_IN_FLIGHT_PER_IP: int(2, 1, 1000),
  PASSWORD_HASH_QUEUE: int(8, 0, 10_000),
  UPSTREAM_TIMEOUT_MS: int(10_000, 1, 600_000),
  UPSTREAM_MAX_SOCKETS: int(256, 1, 100_000),
  UPSTREAM_MAX_QUEUE: int(1024, 0, 1_000_000),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 600_000),
  CIRCUIT_FAILURE_THRESHOLD: int(5, 1, 10_000),
  CIRCUIT_OPEN_MS: int(5000, 1, 600_000),
  MAX_KEYS_PER_ACCOUNT: int(20, 1, 10_000),
  MAX_NEW_KEYS_PER_DAY: int(DEFAULT_MAX_NEW_KEYS_PER_DAY, 1, 1_000_000),
  SESSION_SECRET: secret,
  KEY_HASH_SECRET: secret,
  PUBLIC_URL: optionalUrl(['http', 'https']),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  TRUST_PROXY: z
    .enum(['true', 'false', '1', '0', ''])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  METRICS_PORT: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .pipe(z.coerce.number<string>().int().min(0).max(65535).optional()),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: optionalSecret(16),
  ADMIN_TOKEN: adminTokens,
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_PORT: int(8081, 0, 65535),
  MAX_CONNECTIONS: int(8192, 1, 1_000_000),
  MAX_CONNECTIONS_PER_CLIENT: int(512, 1, 1_000_000),
  KEEP_ALIVE_TIMEOUT_MS: int(5000, 100, 600_000),
  HEADERS_TIMEOUT_MS: int(10_000, 100, 120_000),
  REQUEST_TIMEOUT_MS: int(30_000, 100, 600_000),
  SOCKET_TIMEOUT_MS: int(30_000, 1000, 3_600_000),
});

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl?: string;
  readonly redisUrl?: string;
  /** Namespaces every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  readonly redisKeyPrefix: string;
  readonly upstreams: { readonly production?: string; readonly staging?: string };
  /**
   * Bearer credentials the gateway sends to remote upstreams, so an upstream can refuse anyone
   * else (the standalone store's PETSTORE_GATEWAY_TOKEN). Embedded stores draw their own.
   */
  readonly upstreamTokens: { readonly production?: string; readonly staging?: string };
  readonly cacheTtlSeconds: number;
  /** Bytes of list-cache entries a process keeps: the whole cache without Redis, its copy of entries with it. */
  readonly cacheMaxBytes: number;
  /** The default plan's requests per minute (per account and environment) until an admin sets that plan. */
  readonly rateLimitPerMinute: number;
  /** Requests per client IP per minute that carry no valid key. */
  readonly anonymousRateLimitPerMinute: number;
  /** Sign-in and sign-up attempts one client address may have in progress at once (per process); more get 429. */
  readonly passwordAttemptsInFlightPerIp: number;
  /** Password hashes that may wait for one of the two hashing slots; more get 503 at once. */
  readonly passwordHashQueue: number;
  readonly upstreamTimeoutMs: number;
  /** Connections per upstream at most. */
  readonly upstreamMaxSockets: number;
  /** Calls per upstream that may wait for a connection; beyond them, 503 at once. */
  readonly upstreamMaxQueue: number;
  /** How long a stop waits for in-flight requests before it cuts their connections. */
  readonly shutdownTimeoutMs: number;
  /** Consecutive upstream failures (refused, reset, timeout, 502/503/504) that open an environment's circuit. */
  readonly circuitFailureThreshold: number;
  /** How long an open circuit answers 503 before one probe request may reach the upstream. */
  readonly circuitOpenMs: number;
  /** Active (neither revoked nor expired) API keys one account may hold. */
  readonly maxKeysPerAccount: number;
  /** Keys one account may create or roll per 24-hour window; each leaves a request log behind for a day. */
  readonly maxNewKeysPerDay: number;
  /** Undefined in development: generated into DATA_DIR by the composition root. */
  readonly sessionSecret?: string;
  readonly keyHashSecret?: string;
  /** Undefined → http://localhost:<bound port>. No trailing slash. */
  readonly publicUrl?: string;
  readonly logLevel: string;
  readonly trustProxy: boolean;
  /** Set → a separate, unauthenticated /metrics listener on metricsHost (0 = any free port). */
  readonly metricsPort?: number;
  readonly metricsHost: string;
  /** Set → GET /metrics on the main port, for `Authorization: Bearer <token>` only. */
  readonly metricsToken?: string;
  /** Empty: no admin listener. Otherwise the tokens that open the admin API, each with its holder's label. */
  readonly adminTokens: readonly AdminToken[];
  /** Where the admin listener binds, never the public port (0 = any free port). */
  readonly adminHost: string;
  readonly adminPort: number;
  /** Open client connections the server keeps; at the cap, the oldest idle one is closed to admit a new one. */
  readonly maxConnections: number;
  /** Open connections per socket address; not applied with trustProxy, where that address is the proxy's. */
  readonly maxConnectionsPerClient: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
  /** How long a connection may take to send a request's headers (408 after). */
  readonly headersTimeoutMs: number;
  /** How long a request, headers and body, may take to arrive (408 after); a body sent a byte at a time holds a connection no longer. */
  readonly requestTimeoutMs: number;
  /** A connection on which nothing moves for this long is closed: a client that stops reading its response holds it no longer. */
  readonly socketTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  if (parsed.success && parsed.data.NODE_ENV === 'production') {
    for (const name of ['SESSION_SECRET', 'KEY_HASH_SECRET'] as const) {
      if (!parsed.data[name]) problems.push(`${name}: required when NODE_ENV=production (at least 32 characters)`);
    }
  }
  if (parsed.success && parsed.data.DATABASE_URL) {
    // Development secrets live in each process's DATA_DIR: processes sharing a database would each draw their own.
    for (const name of ['SESSION_SECRET', 'KEY_HASH_SECRET'] as const) {
      if (!parsed.data[name] && parsed.data.NODE_ENV !== 'production') {
        problems.push(`${name}: required with DATABASE_URL, the same in every process sharing the database (at least 32 characters, e.g. openssl rand -base64 32)`);
      }
    }
  }
  if (parsed.success) {
    for (const [token, upstream] of [
      ['PRODUCTION_UPSTREAM_TOKEN', 'PRODUCTION_UPSTREAM'],
      ['STAGING_UPSTREAM_TOKEN', 'STAGING_UPSTREAM'],
    ] as const) {
      if (parsed.data[token] && !parsed.data[upstream]) problems.push(`${token}: set only with ${upstream} (an embedded store gets a token drawn at start)`);
    }
  }
  if (!parsed.success || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    dataDir: isAbsolute(e.DATA_DIR) ? e.DATA_DIR : resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    upstreams: Object.freeze({ production: e.PRODUCTION_UPSTREAM, staging: e.STAGING_UPSTREAM }),
    upstreamTokens: Object.freeze({ production: e.PRODUCTION_UPSTREAM_TOKEN, staging: e.STAGING_UPSTREAM_TOKEN }),
    cacheTtlSeconds: e.CACHE_TTL_SECONDS,
    cacheMaxBytes: e.CACHE_MAX_BYTES,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    anonymousRateLimitPerMinute: e.ANONYMOUS_RATE_LIMIT_PER_MINUTE,
    passwordAttemptsInFlightPerIp: e.PASSWORD_ATTEMPTS_IN_FLIGHT_PER_IP,
    passwordHashQueue: e.PASSWORD_HASH_QUEUE,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    upstreamMaxSockets: e.UPSTREAM_MAX_SOCKETS,
    upstreamMaxQueue: e.UPSTREAM_MAX_QUEUE,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    circuitFailureThreshold: e.CIRCUIT_FAILURE_THRESHOLD,
    circuitOpenMs: e.CIRCUIT_OPEN_MS,
    maxKeysPerAccount: e.MAX_KEYS_PER_ACCOUNT,
    maxNewKeysPerDay: e.MAX_NEW_KEYS_PER_DAY,
    sessionSecret: e.SESSION_SECRET,
    keyHashSecret: e.KEY_HASH_SECRET,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    metricsToken: e.METRICS_TOKEN,
    adminTokens: e.ADMIN_TOKEN,
    adminHost: e.ADMIN_HOST,
    adminPort: e.ADMIN_PORT,
    maxConnections: e.MAX_CONNECTIONS,
    maxConnectionsPerClient: e.MAX_CONNECTIONS_PER_CLIENT,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    socketTimeoutMs: e.SOCKET_TIMEOUT_MS,
  });
}
