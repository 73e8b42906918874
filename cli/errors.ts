import { redactKeys } from './key-text';
import { terminalSafe } from './terminal-text';

/** A failure the operator can act on, told in one sentence (bad input, a missing setting, an unreachable API). */
export class CliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** The admin API refused: its Error body `{code, message, status}`, or only the HTTP status when it sent none. */
export class AdminApiError extends Error {
  readonly code: string | null;
  readonly status: number;

  constructor(status: number, code: string | null, message: string) {
    super(message);
    this.name = 'AdminApiError';
    this.status = status;
    this.code = code;
  }
}

/** The one line printed on stderr for a failure, with any whole key cut short. */
export function formatError(err: unknown): string {
  return redactKeys(describe(err));
}

function describe(err: unknown): string {
  if (err instanceof AdminApiError) {
    const where = err.code === null ? `HTTP ${err.status}` : `${terminalSafe(err.code)}, HTTP ${err.status}`;
    return `error: ${terminalSafe(err.message)} (${where})`;
  }
  if (err instanceof CliError) return `error: ${terminalSafe(err.message)}`;
  const message = err instanceof Error ? err.message : String(err);
  return `error: unexpected failure: ${terminalSafe(message)}`;
}
