/**
 * The write schedule of a ledger that counts in memory and adds its counts to a table in batches.
 * Writes and the reads that add unwritten counts to stored ones take turns, so a batch taken out
 * of memory is, whenever a read looks, either in the table or still in memory: never in both
 * (counted twice) nor in neither. A write is due `intervalMs` after the first count since the last.
 */
export interface BatchedWrites {
  /** Runs `fn` when the write or read before it has ended, failed or not. */
  inTurn<T>(fn: () => Promise<T>): Promise<T>;
  /** Writes now, in turn. */
  flush(): Promise<void>;
  /** Makes a write due in `intervalMs`, unless one is due already or the ledger is closed. */
  schedule(): void;
  /** Stops the schedule and writes what is left. */
  close(): Promise<void>;
}

export function createBatchedWrites(write: () => Promise<void>, { intervalMs, onError }: { intervalMs: number; onError: (err: unknown) => void }): BatchedWrites {
  if (!Number.isInteger(intervalMs) || intervalMs < 1) throw new Error('intervalMs must be a positive integer');
  let turn: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  function inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const next = turn.then(fn, fn);
    turn = next.catch(() => {});
    return next;
  }
  const flush = (): Promise<void> => inTurn(write);

  return {
    inTurn,
    flush,
    schedule() {
      if (timer || closed) return;
      timer = setTimeout(() => {
        timer = undefined;
        flush().catch(onError);
      }, intervalMs);
      timer.unref();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await flush();
    },
  };
}
