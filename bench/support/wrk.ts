import { execFileSync } from 'node:child_process';
import { onCore } from './processes';

export interface WrkResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Responses received in the run. */
  requests: number;
  /** Non-2xx/3xx responses plus socket errors. */
  errors: number;
}

export function requireWrk(): void {
  try {
    execFileSync('which', ['wrk'], { stdio: 'ignore' });
  } catch {
    throw new Error('wrk is not installed: apt-get install -y wrk');
  }
}

function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(value)!;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

/** One wrk run (one thread, fixed connections, --latency), parsed; on `core` when the bench pins. */
export function runWrk(o: { name: string; url: string; headers?: Record<string, string>; connections: number; duration: string; core?: number }): WrkResult {
  const headerArgs = Object.entries(o.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const argv = ['-t1', `-c${o.connections}`, `-d${o.duration}`, '--latency', ...headerArgs, o.url];
  const [command, args] = onCore(o.core, 'wrk', argv);
  const out = execFileSync(command, args, { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]);
  const requests = Number(/(\d+) requests in/.exec(out)![1]);
  const p50 = toMs(/\s50%\s+(\S+)/.exec(out)![1]!);
  const p99 = toMs(/\s99%\s+(\S+)/.exec(out)![1]!);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return { name: o.name, rps, p50, p99, requests, errors };
}
