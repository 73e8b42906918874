import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

/** "2 × AMD EPYC …, 24 GiB, Node v20…" — the line every result file starts with. */
export function machineDescription(): string {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** Resident set size of a process, in MiB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** 1-minute load average: other work on the machine skews every figure, so results say how busy it was. */
export function loadAverage(): string {
  return loadavg()[0]!.toFixed(2);
}
