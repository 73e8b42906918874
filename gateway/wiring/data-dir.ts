import { chmodSync, mkdirSync, statSync } from 'node:fs';

/** DATA_DIR holds key hashes, password hashes, sessions and development secrets: its owner's alone. */
const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates DATA_DIR readable by its owner only, or tightens an existing one that others could
 * read; returns the mode it had when it was tightened, so the caller can say so.
 */
export function secureDataDir(dir: string): { tightenedFrom?: string } {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) === 0) return {};
  chmodSync(dir, mode & PRIVATE_DIR_MODE);
  return { tightenedFrom: mode.toString(8).padStart(3, '0') };
}
