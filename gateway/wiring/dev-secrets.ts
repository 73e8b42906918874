import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Secrets {
  sessionSecret: string;
  keyHashSecret: string;
}

/**
 * Development only: secrets generated once into DATA_DIR (mode 0600) so sessions and keys
 * survive restarts without any setup. Production requires them from the environment.
 */
export function loadOrCreateDevSecrets(dataDir: string): Secrets {
  const path = join(dataDir, 'secrets.json');
  try {
    const stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<Secrets>;
    if (stored.sessionSecret && stored.keyHashSecret) return { sessionSecret: stored.sessionSecret, keyHashSecret: stored.keyHashSecret };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${path} is unreadable; delete it to generate new development secrets.`, { cause: err });
  }
  const secrets = { sessionSecret: randomBytes(32).toString('base64url'), keyHashSecret: randomBytes(32).toString('base64url') };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
  return secrets;
}
