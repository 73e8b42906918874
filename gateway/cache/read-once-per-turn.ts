/**
 * Reads of the same key asked for during one turn of the event loop share one read, issued from
 * `setImmediate`, after every I/O callback of the turn. Every request sharing it therefore arrived
 * before it was sent, so it sees every write acknowledged before that request arrived: sharing
 * costs no freshness, and under load one read answers all the requests of a turn.
 */
export function readOncePerTurn<T>(
  read: (key: string) => Promise<T>,
  /** Runs a task at the end of the turn; the gateway sends reads before the turn's writes (turn-end.ts). */
  atTurnEnd: (task: () => void) => void = setImmediate,
): (key: string) => Promise<T> {
  let batch: Map<string, { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void }> | undefined;

  const send = () => {
    const sending = batch!;
    batch = undefined;
    for (const [key, waiting] of sending) read(key).then(waiting.resolve, waiting.reject);
  };

  return function readThisTurn(key: string): Promise<T> {
    if (!batch) {
      batch = new Map();
      atTurnEnd(send);
    }
    let waiting = batch.get(key);
    if (!waiting) {
      let resolve!: (value: T) => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      waiting = { promise, resolve, reject };
      batch.set(key, waiting);
    }
    return waiting.promise;
  };
}
