import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** A script's usage: its opening doc comment, the one place its settings are written down. */
export function usageOf(scriptPath: string): string {
  const source = readFileSync(scriptPath, 'utf8');
  const comment = /^\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

export type ArgumentsVerdict = { run: true } | { run: false; exitCode: 0 | 2; text: string };

/**
 * The benches take their settings from the environment and run for minutes: `--help` prints the
 * usage, and any other argument is refused before anything starts (not ignored by a long run).
 */
export function judgeArguments(args: readonly string[], usage: string): ArgumentsVerdict {
  try {
    const { values } = parseArgs({ args: [...args], options: { help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
    return values.help ? { run: false, exitCode: 0, text: usage } : { run: true };
  } catch (err) {
    return { run: false, exitCode: 2, text: `${(err as Error).message}\n\n${usage}` };
  }
}

/** Exits with the usage unless the command line asks for a plain run. */
export function readBenchArguments(scriptPath: string): void {
  const verdict = judgeArguments(process.argv.slice(2), usageOf(scriptPath));
  if (verdict.run) return;
  (verdict.exitCode === 0 ? console.log : console.error)(verdict.text);
  process.exit(verdict.exitCode);
}
