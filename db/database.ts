/**
 * The small interface both drivers implement, so the same SQL runs on PGlite (embedded,
 * one process) and on a PostgreSQL server through `pg` (scale-out).
 */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Throws when the store cannot answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Quotes an identifier we build ourselves (schema names), refusing anything unexpected. */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Invalid SQL identifier: ${name}`);
  return `"${name}"`;
}
