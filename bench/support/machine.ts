import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

/** "2 × AMD EPYC (family 25, model 1; SRSO: …), 24 GiB, Node v20…" — the line every result file starts with. */
export function machineDescription(): string {
  const cores = cpus();
  const vulnerabilities = '/sys/devices/system/cpu/vulnerabilities';
  const generation = cpuGeneration(readOrEmpty('/proc/cpuinfo'), {
    Retbleed: readOrEmpty(`${vulnerabilities}/retbleed`),
    SRSO: readOrEmpty(`${vulnerabilities}/spec_rstack_overflow`),
  });
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}${generation ? ` (${generation})` : ''}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/**
 * The CPU's family and model, and how the kernel handles the return-stack attacks (Retbleed on
 * first-generation EPYC, SRSO on later ones) when it must: VMs that all call their CPU "AMD EPYC"
 * served bare Node at 18k to 60k req/s, the slowest ones paying for a safe return on every system
 * call (docs/benchmarks.md). Empty when /proc says nothing (not Linux).
 */
export function cpuGeneration(cpuinfo: string, vulnerabilities: Readonly<Record<string, string>>): string {
  const family = /^cpu family\s*:\s*(\d+)/m.exec(cpuinfo)?.[1];
  const model = /^model\s*:\s*(\d+)/m.exec(cpuinfo)?.[1];
  const parts = family !== undefined && model !== undefined ? [`family ${family}, model ${model}`] : [];
  for (const [name, state] of Object.entries(vulnerabilities)) {
    const handling = state.trim();
    if (handling !== '' && handling !== 'Not affected') parts.push(`${name}: ${handling}`);
  }
  return parts.join('; ');
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
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
