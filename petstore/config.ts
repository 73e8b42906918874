import { resolve } from 'node:path';
import { z } from 'zod';
import { LOG_LEVELS } from '../lib/logger';
import { optionalSecret } from '../lib/optional-secret';
import { MIN_GATEWAY_TOKEN_LENGTH } from './gateway-token';

/** The standalone pet store's own settings (when run without the gateway). */
const schema = z.object({
  PETSTORE_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  PETSTORE_HOST: z.string().min(1).default('127.0.0.1'),
  PETSTORE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier').default('petstore_production'),
  DATA_DIR: z.string().min(1).default('./data/petstore'),
  DATABASE_URL: z.string().url().optional().or(z.literal('').transform(() => undefined)),
  // The gateway's PRODUCTION_UPSTREAM_TOKEN / STAGING_UPSTREAM_TOKEN: set, the store answers only requests carrying it.
  PETSTORE_GATEWAY_TOKEN: optionalSecret(MIN_GATEWAY_TOKEN_LENGTH),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
});

export type PetStoreConfig = Readonly<{ port: number; host: string; schema: string; dataDir: string; databaseUrl?: string; gatewayToken?: string; logLevel: string }>;

export function parsePetStoreConfig(env: Record<string, string | undefined>): PetStoreConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid configuration:\n${parsed.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    port: e.PETSTORE_PORT,
    host: e.PETSTORE_HOST,
    schema: e.PETSTORE_SCHEMA,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    gatewayToken: e.PETSTORE_GATEWAY_TOKEN,
    logLevel: e.LOG_LEVEL,
  });
}
