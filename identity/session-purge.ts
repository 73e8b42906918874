import { runEvery } from '../lib/run-every';
import type { SessionService } from './session-service';

/** Hourly: sessions expire after days, and the rows only take room; no need to chase them closely. */
export const SESSION_PURGE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes expired and logged-out sessions (a day after they ended) once at start and then every
 * `intervalMs`, so the sessions table does not grow with every login forever. A failed purge is
 * reported and tried again at the next interval. Returns the stop for the composition root's closers.
 */
export function schedulePurgeOfSessions(
  sessions: Pick<SessionService, 'purgeExpired'>,
  options: { intervalMs?: number; onError: (err: unknown) => void; onPurged?: (count: number) => void },
): () => Promise<void> {
  const purge = () => sessions.purgeExpired().then((count) => options.onPurged?.(count));
  return runEvery(purge, options.intervalMs ?? SESSION_PURGE_INTERVAL_MS, options.onError);
}
