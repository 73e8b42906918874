import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import type { Database } from '../../db/database';
import { openDatabase } from '../../db/open-database';
import { migrateKeys } from '../../identity/migrations';
import { ENVIRONMENTS } from '../../openapi/environments';
import type { OperationTable } from '../../openapi/operations';
import { startPetStore } from '../../petstore/open-pet-store';
import type { Environment } from '../pipeline/pipeline';
import type { Wiring } from './context';
import { secureDataDir } from './data-dir';
import { loadOrCreateDevSecrets } from './dev-secrets';
import { createRedis } from './redis';
import { rootCause } from './root-cause';

export interface Secrets {
  sessionSecret: string;
  keyHashSecret: string;
}

/** Two connections: a subscribed Redis connection can run no other command. */
export interface RedisConnections {
  publisher: Redis;
  subscriber: Redis;
}

export interface Upstreams {
  /** Each environment's upstream base URL; the start-up log line shows these. */
  urls: Record<Environment, string>;
  /** Each upstream's own credential: never logged. */
  tokens: Partial<Record<Environment, string>>;
}

export interface Stores {
  secrets: Secrets;
  redis?: RedisConnections;
  db: Database;
  upstreams: Upstreams;
}

/** Everything that holds state: the data dir and its secrets, Redis, the keys database, the embedded pet stores. */
export async function openStores(w: Wiring, operations: OperationTable, given?: Database): Promise<Stores> {
  const secrets = prepareSecrets(w);
  const redis = w.config.redisUrl ? await connectRedis(w, w.config.redisUrl) : undefined;
  const db = given ? await migrated(given) : await openKeysDatabase(w);
  const upstreams = await startEmbeddedStores(w, db, operations);
  return { secrets, redis, db, upstreams };
}

/** Explicit secrets win; development fills the gaps from DATA_DIR (a production config requires both). */
function prepareSecrets({ config, logger }: Wiring): Secrets {
  if (!config.databaseUrl) {
    const { tightenedFrom } = secureDataDir(config.dataDir);
    if (tightenedFrom) logger.warn({ dataDir: config.dataDir, was: tightenedFrom, now: '700' }, 'DATA_DIR was open to other users; its permissions are now 700');
  }
  const dev = config.sessionSecret && config.keyHashSecret ? undefined : loadOrCreateDevSecrets(config.dataDir);
  return { sessionSecret: config.sessionSecret ?? dev!.sessionSecret, keyHashSecret: config.keyHashSecret ?? dev!.keyHashSecret };
}

async function connectRedis({ defer }: Wiring, url: string): Promise<RedisConnections> {
  const publisher = createRedis(url, { autoPipelining: true });
  const subscriber = createRedis(url);
  defer(() => {
    publisher.disconnect();
    subscriber.disconnect();
  });
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
  } catch (err) {
    throw new Error(`Redis at REDIS_URL is unreachable: ${rootCause(err)}`, { cause: err });
  }
  return { publisher, subscriber };
}

/** A database opened by the caller, who also closes it (tests that read what the gateway wrote). */
async function migrated(db: Database): Promise<Database> {
  await migrateKeys(db);
  return db;
}

/** The keys database, opened and migrated; with DATABASE_URL, a failure names the server and its cause. */
async function openKeysDatabase({ config, defer }: Wiring): Promise<Database> {
  try {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    defer(() => db.close());
    await migrateKeys(db);
    return db;
  } catch (err) {
    // The store's own error is the 503 clients see ("temporarily unavailable"); an operator needs the cause.
    if (!config.databaseUrl) throw err;
    throw new Error(`PostgreSQL at DATABASE_URL could not be reached or prepared: ${rootCause(err)}`, { cause: err });
  }
}

/** An environment without a remote upstream gets a pet store of its own, in this process, on the keys database. */
async function startEmbeddedStores({ config, logger, defer }: Wiring, db: Database, operations: OperationTable): Promise<Upstreams> {
  const upstreams: Upstreams = { urls: {} as Record<Environment, string>, tokens: {} };
  // The embedded stores answer only this process: other processes on the host cannot reach them past the gateway.
  const storeToken = randomBytes(32).toString('base64url');
  for (const environment of ENVIRONMENTS) {
    const remote = config.upstreams[environment];
    if (remote) {
      upstreams.urls[environment] = remote;
      upstreams.tokens[environment] = config.upstreamTokens[environment];
      continue;
    }
    const store = await startPetStore({ db, schema: `petstore_${environment}`, operations, gatewayToken: storeToken, logger: logger.child({ petStore: environment }) });
    defer(() => store.close());
    upstreams.urls[environment] = store.url;
    upstreams.tokens[environment] = storeToken;
  }
  return upstreams;
}
