import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY_NODE_FLAGS } from '../bench/support/processes';

const ROOT = join(__dirname, '..');

/** The benchmarks measure the gateway as it runs in production: with the same Node flags. */
describe('the Node flags the gateway runs with', () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const dockerCmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))![1]!;

  test('are the same in npm start, npm run start:built, the Docker image and the benchmarks', () => {
    expect(GATEWAY_NODE_FLAGS).toEqual(['--max-semi-space-size=32', '--min-semi-space-size=32', '--no-allocation-site-pretenuring', '--no-parallel-scavenge', '--no-memory-reducer', '--heap-growing-percent=100']);
    expect(scripts.start).toBe(`node ${GATEWAY_NODE_FLAGS.join(' ')} --import tsx gateway/main.ts`);
    expect(scripts['start:built']).toBe(`node ${GATEWAY_NODE_FLAGS.join(' ')} dist/gateway/main.js`);
    expect(JSON.parse(dockerCmd)).toEqual(['node', ...GATEWAY_NODE_FLAGS, 'dist/gateway/main.js']);
  });

  // V8 flags come and go between Node versions, and Node refuses to start on one it does not know.
  test('are accepted by the Node running the suite', () => {
    const run = spawnSync(process.execPath, [...GATEWAY_NODE_FLAGS, '-e', 'process.stdout.write(process.version)'], { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr, stdout: run.stdout }).toEqual({ status: 0, stderr: '', stdout: process.version });
  });

  // V8 starts the young generation at 1 MB and shrinks it back there when a process idles; the gateway's stays at 32.
  test('give the gateway a young generation of 32 MB from its start', () => {
    const newSpace = "process.stdout.write(String(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size))";
    const run = spawnSync(process.execPath, [...GATEWAY_NODE_FLAGS, '-e', newSpace], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(Number(run.stdout)).toBeGreaterThanOrEqual(32 * 1024 * 1024);
  });

  // V8 sets the next mark-compact from the live heap after one; for a gateway promoting little its own factor is 1.1.
  test('set the old generation its next mark-compact at twice the heap a mark-compact leaves', () => {
    const script = 'globalThis.kept = Array.from({ length: 1e5 }, (_, i) => ({ i })); gc()';
    const run = spawnSync(process.execPath, [...GATEWAY_NODE_FLAGS, '--expose-gc', '--trace-gc-verbose', '-e', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    // Node 20's V8 prints the factor it applies on the limit's line; later ones on the factor's line, after the flag.
    expect(run.stdout).toMatch(/\[HeapController\] (factor 2\.0 based on|Limit: old size: \d+ KB, new limit: \d+ KB \(2\.0\))/);
  });
});
