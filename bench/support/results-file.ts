import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** BENCH_RECORD=1 (or true) asks for the tracked results in bench/results/. */
export function isRecording(env: Env = process.env): boolean {
  return env.BENCH_RECORD === '1' || env.BENCH_RECORD === 'true';
}

/** Where a report goes: a local run must not change the tracked results, so recording is asked for. */
export function resultsPath(root: string, name: string, env: Env = process.env): string {
  return isRecording(env) ? join(root, 'bench', 'results', name) : join(root, 'bench', 'results', 'local', name);
}

/** Writes the report and says where on stderr, so the printed table can be found again. */
export function writeResults(root: string, name: string, report: string, env: Env = process.env): void {
  const path = resultsPath(root, name, env);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${report}\n`);
  console.error(isRecording(env) ? `recorded ${path}` : `wrote ${path} (untracked; BENCH_RECORD=1 records it in bench/results/${name})`);
}
