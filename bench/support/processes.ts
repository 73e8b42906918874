import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Benchmarks measure what production runs: the compiled JavaScript of `npm run build` (as in the
 * Docker image), not `npm start`'s on-the-fly TypeScript, which costs 10–30 % more per request.
 */
export function buildOnce(): void {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * The Node flags `npm start` and the Docker image run the gateway with (test/node-flags.test.ts
 * keeps the three in step); what each bought is measured in docs/benchmarks.md ("GC flags"):
 * - a 32 MB young generation, at least as well as at most: half the scavenges, and no shrinking
 *   to 1 MB while idle that the next burst pays for;
 * - no allocation-site pretenuring: no mode where every scavenge promotes megabytes;
 * - no parallel scavenge: on 2 cores the helpers compete with the client, and the pause is longer;
 * - no memory reducer: an idle gateway keeps the old generation's room it had under load;
 * - the old generation's next limit at twice its live size: V8's own factor for a gateway that
 *   promotes little is 1.1, a mark-compact for every 8 MB promoted.
 */
export const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=32', '--min-semi-space-size=32', '--no-allocation-site-pretenuring', '--no-parallel-scavenge', '--no-memory-reducer', '--heap-growing-percent=100'];

/**
 * With two cores or more, the servers run on core 0 and the load generator on core 1
 * (BENCH_PIN=0 turns it off): a server and its upstream then share one core, as a proxy and a
 * fast upstream on one host do, and wrk never takes the CPU a server is measured by.
 */
export const PINNED = process.env.BENCH_PIN !== '0' && cpus().length >= 2;
export const SERVER_CORE = 0;
export const CLIENT_CORE = 1;

/**
 * `command args` on one core when the bench pins and a core is given (taskset execs the
 * command: the pid is the command's); as is otherwise.
 */
export function onCore(core: number | undefined, command: string, args: readonly string[]): [string, string[]] {
  return PINNED && core !== undefined ? ['taskset', ['-c', String(core), command, ...args]] : [command, [...args]];
}

/** `gateway/main.ts` → the compiled `dist/gateway/main.js`. */
export function builtEntry(sourcePath: string): string {
  return join(ROOT, 'dist', sourcePath.replace(/\.ts$/, '.js'));
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export interface NodeProcess {
  pid: number;
  child: ChildProcess;
  /** What `ready` matched in its output. */
  readyMatch: RegExpExecArray;
  /** Everything it printed so far (stdout and stderr; the last 200 kB). */
  output(): string;
  /** SIGTERM, bounded wait, then SIGKILL; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Node with `args` in its own process (so the bench client and wrk do not share its event loop),
 * in the project root, on `core` when the bench pins; resolves once its output (stdout and
 * stderr) matches `ready`. Rejects, with what it printed, if it exits first or is not ready
 * within `timeoutMs` (then it is killed). `env` is its whole environment; the bench's own when absent.
 * `wrap` runs Node under another program (valgrind …), which must exec it or keep its pid.
 */
export function startNodeProcess(o: {
  name: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  ready: RegExp;
  core?: number;
  timeoutMs?: number;
  wrap?: readonly string[];
}): Promise<NodeProcess> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const [program, ...programArgs] = [...(o.wrap ?? []), process.execPath, ...o.args];
  const [command, args] = onCore(o.core, program!, programArgs);
  const child = spawn(command, args, { cwd: ROOT, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(killer);
    return code;
  };
  return new Promise((resolve, reject) => {
    let readyMatch: RegExpExecArray | null = null;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${o.name} not ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      // Keep the tail only: a long soak must not grow the bench's own memory with a server's logs.
      out = (out + chunk.toString()).slice(-200_000);
      if (readyMatch) return;
      readyMatch = o.ready.exec(out);
      if (readyMatch && child.pid) {
        clearTimeout(timer);
        resolve({ pid: child.pid, child, readyMatch, output: () => out, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${o.name} could not start: ${err.message}`));
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${o.name} exited with ${code} before it was ready:\n${out}`));
    });
  });
}

export interface BenchGateway extends NodeProcess {
  url: string;
}

/**
 * `npm start`'s entry point in its own process, with its Node flags, on 127.0.0.1 and a port of
 * its choosing; resolves at its ready line.
 */
export async function startGateway(env: Record<string, string>, timeoutMs = 60_000, options: { core?: number; wrap?: readonly string[] } = {}): Promise<BenchGateway> {
  const gateway = await startNodeProcess({
    name: 'gateway',
    args: [...GATEWAY_NODE_FLAGS, builtEntry('gateway/main.ts')],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    ready: /ready at (http:\/\/\S+)/,
    core: options.core,
    timeoutMs,
    wrap: options.wrap,
  });
  return { ...gateway, url: gateway.readyMatch[1]! };
}
