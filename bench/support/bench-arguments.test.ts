import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judgeArguments, usageOf } from './bench-arguments';

/** A bench that runs for minutes answers `--help` and refuses what it does not know, before it starts. */
describe('bench arguments', () => {
  const usage = 'Usage text';

  test('when there are no arguments, then the bench runs', () => {
    expect(judgeArguments([], usage)).toEqual({ run: true });
  });

  test('when --help or -h is given, then the usage is printed and the exit code is 0', () => {
    expect(judgeArguments(['--help'], usage)).toEqual({ run: false, exitCode: 0, text: usage });
    expect(judgeArguments(['-h'], usage)).toEqual({ run: false, exitCode: 0, text: usage });
  });

  test('when an unknown option or a positional is given, then it is named, the usage follows and the exit code is 2', () => {
    const unknown = judgeArguments(['--rounds=3'], usage);
    expect(unknown).toMatchObject({ run: false, exitCode: 2 });
    expect((unknown as { text: string }).text).toMatch(/^Unknown option '--rounds'[\s\S]*\n\nUsage text$/);
    const positional = judgeArguments(['fast'], usage);
    expect(positional).toMatchObject({ run: false, exitCode: 2 });
    expect((positional as { text: string }).text).toMatch(/Unexpected argument 'fast'[\s\S]*Usage text$/);
  });

  test('the usage is the script\'s opening doc comment, without its comment marks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-args-'));
    try {
      const script = join(dir, 'script.ts');
      writeFileSync(script, '/**\n * Runs the thing: `npm run thing`.\n *\n * Settings: THING_SECONDS (5).\n */\nimport x from "y";\n/** not this one */\n');
      expect(usageOf(script)).toBe('Runs the thing: `npm run thing`.\n\nSettings: THING_SECONDS (5).');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
