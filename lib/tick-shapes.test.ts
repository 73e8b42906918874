import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What V8 has learnt at `process.nextTick`'s entry literal, after ticks, full GCs with no entry
 * alive, and ticks again: the state of each computed field's feedback, as `%DebugPrint` lists it.
 */
function nextTickFeedbackAfterFullGcs(keep: boolean): string[] {
  const script = `
    const { keepTickShapesAlive } = require(${JSON.stringify(join(__dirname, 'tick-shapes.ts'))});
    if (${keep}) keepTickShapesAlive();
    const noop = () => {};
    (async () => {
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 2000; i++) process.nextTick(noop);
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      for (let i = 0; i < 2000; i++) process.nextTick(noop);
      await new Promise((resolve) => setImmediate(resolve));
      new Function('f', '%DebugPrint(f)')(process.nextTick);
    })();
  `;
  // To a file: V8 prints through C stdio, which loses what a full non-blocking pipe refuses.
  const dir = mkdtempSync(join(tmpdir(), 'tick-shapes-'));
  const file = join(dir, 'debug-print.txt');
  const fd = openSync(file, 'w');
  try {
    execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--import', 'tsx', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', fd, 'inherit'],
    });
  } finally {
    closeSync(fd);
  }
  const out = readFileSync(file, 'utf8');
  rmSync(dir, { recursive: true });
  return [...out.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!);
}

describe('keeping a nextTick entry alive', () => {
  test('when full GCs run while no entry is alive, then nextTick keeps its fast path', () => {
    const states = nextTickFeedbackAfterFullGcs(true);
    expect(states.length).toBeGreaterThan(0);
    expect(states).not.toContain('MEGAMORPHIC');
  });

  // V8 (Node 20, 22 and 24) compares the class it recorded, weakly, with the new one, and a dropped class never matches.
  test('when nothing holds an entry, then the same GCs turn it megamorphic', () => {
    expect(nextTickFeedbackAfterFullGcs(false)).toContain('MEGAMORPHIC');
  });
});
