import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * User + system CPU seconds a process has used, all its threads, from /proc (Linux). CPU per
 * request is steadier than requests per second on a VM whose speed drifts: a server that is
 * CPU-bound serves 1 / (CPU per request), whatever else slowed the run down.
 */
export function cpuSeconds(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** A process's children (nginx's workers under its master), from /proc (Linux). */
export function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}
