/**
 * The message of an error's innermost cause, for a one-line operator message; an AggregateError
 * (one error per address tried) lists its errors, and a thrown non-Error is still named.
 */
export function rootCause(err: unknown): string {
  let inner = err;
  while (inner instanceof Error && inner.cause !== undefined) inner = inner.cause;
  if (inner instanceof AggregateError && !inner.message) return inner.errors.map((e: unknown) => rootCause(e)).join('; ');
  if (inner instanceof Error) return inner.message || inner.name;
  if (typeof inner === 'object' && inner !== null) {
    const { message, code, name } = inner as { message?: unknown; code?: unknown; name?: unknown };
    const text = [message, code, name].find((v) => typeof v === 'string' && v.length > 0);
    if (text) return text as string;
  }
  return String(inner);
}
