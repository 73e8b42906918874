/** A cleanup registered where its resource is built. */
export type Cleanup = () => Promise<void> | void;

export interface Deferred {
  /** Registers a cleanup: cleanups run last registered first, so nothing closes before what depends on it. */
  defer(cleanup: Cleanup): void;
  /** Runs every registered cleanup once, in reverse order; resolves with how many failed or timed out. */
  runAll(): Promise<number>;
}

export interface DeferOptions {
  /** A cleanup that does not finish within this is given up on, so a stop always ends. */
  timeoutMs: number;
  /** Told of each cleanup that failed or timed out; the others still run. */
  onFailure: (err: unknown) => void;
}

/** One LIFO stack of cleanups, as Fastify's onClose hooks: shutdown order is the reverse of construction. */
export function createDefer({ timeoutMs, onFailure }: DeferOptions): Deferred {
  const stack: Cleanup[] = [];
  return {
    defer(cleanup) {
      stack.push(cleanup);
    },
    async runAll() {
      let failures = 0;
      for (let cleanup = stack.pop(); cleanup; cleanup = stack.pop()) {
        try {
          await withTimeout(Promise.resolve().then(cleanup), timeoutMs);
        } catch (err) {
          failures++;
          onFailure(err);
        }
      }
      return failures;
    },
  };
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`did not close within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
