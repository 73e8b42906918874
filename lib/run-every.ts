/**
 * Runs `task` once now and then every `intervalMs`, one run at a time; a failed run is reported
 * and the next interval tries again. Returns the stop, which waits for a run under way, so the
 * store it uses closes after it instead of under it.
 */
export function runEvery(task: () => Promise<void>, intervalMs: number, onError: (err: unknown) => void): () => Promise<void> {
  if (!Number.isInteger(intervalMs) || intervalMs < 1) throw new Error('intervalMs must be a positive integer');
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = running.then(() => task().catch(onError));
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
