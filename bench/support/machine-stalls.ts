import { spawn } from 'node:child_process';
import { cpus } from 'node:os';

/**
 * How often this machine takes a core away for a millisecond or more, with every server idle: one
 * process per core reads the monotonic clock in a tight loop, and a gap between two readings is
 * time the core was given to something else (the kernel, another process or, on a VM, the host).
 * No server can answer during such a gap, so it sets a floor under every p99 the bench measures.
 */
export interface MachineStalls {
  /** Gaps of at least 1 ms, per core per second. */
  perCoreSecond: number;
  /** Time lost in those gaps, as a share of the time measured. */
  lostShare: number;
  longestMs: number;
}

const MIN_GAP_MS = 1;

/** The spinner's own start-up (V8 compiling its loop) shows as gaps in its first tens of ms. */
const WARMUP_MS = 200;

// Reads the clock and nothing else. Its only garbage is the clock's numbers, and scavenging a heap this small
// takes tens of µs: the spinner's own GC stays far under the gaps it counts.
const SPINNER = `
const { performance } = require('node:perf_hooks');
for (const warm = performance.now() + ${WARMUP_MS}; performance.now() < warm; );
const end = performance.now() + Number(process.argv[1]);
const gaps = [];
for (let last = performance.now(); last < end; ) {
  const t = performance.now();
  if (t - last >= ${MIN_GAP_MS}) gaps.push(t - last);
  last = t;
}
process.stdout.write(JSON.stringify(gaps));`;

function spin(ms: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SPINNER, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.once('error', reject);
    // 'close', not 'exit': only then has all of its output been read.
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`stall spinner exited with ${code}`))));
  });
}

export async function measureMachineStalls(seconds: number): Promise<MachineStalls> {
  const cores = cpus().length;
  const gaps = (await Promise.all(Array.from({ length: cores }, () => spin(seconds * 1000)))).flat();
  const lostMs = gaps.reduce((sum, gap) => sum + gap, 0);
  return {
    perCoreSecond: gaps.length / (cores * seconds),
    lostShare: lostMs / (cores * seconds * 1000),
    longestMs: gaps.length ? Math.max(...gaps) : 0,
  };
}

export const describeStalls = (s: MachineStalls) =>
  `${s.perCoreSecond.toFixed(1)} gaps ≥ ${MIN_GAP_MS} ms per core per second, ${(s.lostShare * 100).toFixed(1)} % of the time lost in them, longest ${s.longestMs.toFixed(1)} ms`;
