import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

export interface ReadyProcess {
  child: ChildProcess;
  /** The URL its ready line announced. */
  url: string;
  /** Milliseconds from spawn to the ready line. */
  readyMs: number;
  exited: Promise<number | null>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * Starts one of the project's entry points as a real child process (Node with `args`, in the
 * project root, with only `env` plus PATH and HOME) and resolves when its output matches `ready`,
 * whose first group, if it has one, is the URL it serves. Rejects if it exits first (the error
 * carries its exit code and output) or takes longer than `timeoutMs`.
 */
export function spawnUntilReady(options: {
  name: string;
  /** Another program than Node, found on PATH (a redis-server). */
  command?: string;
  args: string[];
  env: Record<string, string>;
  ready: RegExp;
  timeoutMs: number;
  /** 'pipe' when the test talks to the child over stdin. */
  stdin?: 'ignore' | 'pipe';
}): Promise<ReadyProcess> {
  const started = Date.now();
  const child = spawn(options.command ?? process.execPath, options.args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.name} not ready within ${options.timeoutMs} ms:\n${out}`));
    }, options.timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = options.ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] ?? '', readyMs: Date.now() - started, exited, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${options.name} exited with ${code} before it was ready:\n${out}`), { code, output: out }));
    });
  });
}
