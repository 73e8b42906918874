/** Polls `check` until it holds; throws "timed out waiting for <what>" after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Reads until `done` holds for what was read or `withinMs` has passed since `since` (default: now),
 * every `everyMs`; resolves with the last value read and the milliseconds from `since` to it. It
 * does not throw when time runs out: the caller's assertions on `value` and `ms` say what failed.
 */
export async function pollFor<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options: { withinMs: number; everyMs?: number; since?: number },
): Promise<{ value: T; ms: number }> {
  const since = options.since ?? Date.now();
  let value = await read();
  while (!done(value) && Date.now() - since < options.withinMs) {
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 20));
    value = await read();
  }
  return { value, ms: Date.now() - since };
}
