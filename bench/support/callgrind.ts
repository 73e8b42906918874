import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Switching counting on or off waits for a server under valgrind to reach a safe point: seconds, not minutes. */
const CONTROL_TIMEOUT_MS = 120_000;

/**
 * A server run under valgrind's callgrind with counting off until asked: start-up and warm-up
 * cost nothing, and `count` measures the requests it wraps (with whatever the server's timers do
 * meanwhile). `--separate-threads` writes one file per thread, so the main thread's instructions
 * are read apart from the helper threads' (V8's compiler and GC, libuv's pool), whose work moves
 * with timing.
 */
export interface Callgrind {
  /** The command prefix that runs a program under it. */
  prefix: readonly string[];
  /** Instructions the main thread of `pid` executed while `work` ran; once per server (it reads the first dump). */
  count(pid: number, work: () => Promise<void>): Promise<number>;
}

/**
 * `dir` holds the output files and the control pipes (`--vgdb-prefix`): a run never meets another
 * run's. `env` is what the server runs with: callgrind_control finds its pipes by the user and
 * host names in it (LOGNAME or USER, HOST).
 */
export function createCallgrind(dir: string, env: NodeJS.ProcessEnv): Callgrind {
  const vgdb = join(dir, 'vgdb');
  // callgrind_control exits 0 and prints "OK." whatever happens: only what else it printed tells a failure.
  const control = (pid: number, ...args: string[]) => {
    const run = spawnSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, ...args, String(pid)], { env, encoding: 'utf8', timeout: CONTROL_TIMEOUT_MS });
    // Less the line that names the server by its command line, which is the server's own text.
    const said = `${run.stdout ?? ''}${run.stderr ?? ''}`.split('\n').filter((line) => !line.startsWith('PID ')).join('\n');
    if (run.error || !/^\s*OK\.$/m.test(said) || /error|failed|no active|not detected/i.test(said)) {
      throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${run.error?.message ?? said.trim()}`);
    }
  };
  const counted = new Set<number>();
  return {
    prefix: ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--vgdb-prefix=${vgdb}`, `--callgrind-out-file=${join(dir, 'callgrind.%p')}`],
    async count(pid, work) {
      if (counted.has(pid)) throw new Error(`callgrind: ${pid} was counted already; its next dump is another file`);
      counted.add(pid);
      control(pid, '--instr=on');
      await work();
      control(pid, '--dump');
      control(pid, '--instr=off');
      // The first dump of thread 1: callgrind.<pid>.1-01; its total is what the thread ran since counting began.
      const text = readFileSync(join(dir, `callgrind.${pid}.1-01`), 'utf8');
      const total = /^(?:summary|totals): (\d+)/m.exec(text);
      if (!total) throw new Error(`no instruction total in ${dir}/callgrind.${pid}.1-01`);
      return Number(total[1]);
    },
  };
}

/** Valgrind is not one of npm's packages: say how to install it before anything starts. */
export function requireValgrind(): void {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not installed: apt-get install -y valgrind');
  }
}
