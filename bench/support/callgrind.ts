import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A server run under valgrind's callgrind with counting off until asked: start-up and warm-up
 * cost nothing, and `count` measures exactly the requests it wraps. `--separate-threads` writes
 * one file per thread, so the main thread's instructions are read apart from V8's compiler and
 * GC helper threads, whose work moves with timing.
 */
export interface Callgrind {
  /** The command prefix that runs a program under it. */
  prefix: readonly string[];
  /** Instructions the main thread of `pid` executed while `work` ran. */
  count(pid: number, work: () => Promise<void>): Promise<number>;
}

/**
 * `dir` holds the output files and the control pipes (`--vgdb-prefix`): a run never meets another
 * run's. `env` is what the server runs with; callgrind_control needs its USER and HOST to find the
 * pipes.
 */
export function createCallgrind(dir: string, env: NodeJS.ProcessEnv): Callgrind {
  const vgdb = join(dir, 'vgdb');
  const control = (pid: number, ...args: string[]) => execFileSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, ...args, String(pid)], { env, stdio: 'pipe' });
  return {
    prefix: ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--vgdb-prefix=${vgdb}`, `--callgrind-out-file=${join(dir, 'callgrind.%p')}`],
    async count(pid, work) {
      control(pid, '--instr=on');
      await work();
      control(pid, '--dump');
      control(pid, '--instr=off');
      // The first dump of thread 1: callgrind.<pid>.1-01.
      const text = readFileSync(join(dir, `callgrind.${pid}.1-01`), 'utf8');
      const total = /^(?:summary|totals): (\d+)/m.exec(text);
      if (!total) throw new Error(`no instruction total in ${dir}/callgrind.${pid}.1-01`);
      return Number(total[1]);
    },
  };
}

/** Whether valgrind can run here. */
export function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

