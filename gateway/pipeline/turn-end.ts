/**
 * Work deferred to the end of the event-loop turn, after every I/O callback of the turn, in one
 * `setImmediate` and in two rounds: first the reads the turn's requests wait for (Redis reads,
 * and the hand-off of upstream calls), then the responses. Reads go first so that their round
 * trip overlaps the writing of the responses (hundreds of µs under load) instead of starting
 * after it; the answer is then usually in by the next poll, one turn sooner.
 *
 * One per process, created in the composition root and shared by whatever defers work to the turn's end.
 */
export interface TurnEnd {
  /** Runs `task` at the end of this turn, before the writes: what the turn's requests wait for. */
  beforeWrites(task: () => void): void;
  /** Runs `task` at the end of this turn, after the reads. */
  writes(task: () => void): void;
}

export function createTurnEnd(): TurnEnd {
  const reads: Array<() => void> = [];
  const writes: Array<() => void> = [];
  let scheduled = false;

  const run = () => {
    scheduled = false;
    runAll(reads);
    runAll(writes);
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(run);
  };

  return {
    beforeWrites(task) {
      reads.push(task);
      schedule();
    },
    writes(task) {
      writes.push(task);
      schedule();
    },
  };
}

/** Runs and empties a list; a task that throws does not keep the others (or later turns) from running. */
function runAll(tasks: Array<() => void>): void {
  for (let i = 0; i < tasks.length; i++) {
    try {
      tasks[i]!();
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }
  tasks.length = 0;
}
