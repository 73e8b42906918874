import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resultsPath, writeResults } from './results-file';

/** A benchmark run leaves the tracked results alone unless it is asked to record them. */
describe('benchmark results file', () => {
  const root = '/repo';

  test('when BENCH_RECORD is unset, then the report goes to the untracked bench/results/local/', () => {
    expect(resultsPath(root, 'latest.md', {})).toBe(join(root, 'bench', 'results', 'local', 'latest.md'));
  });

  test('when BENCH_RECORD is 0 or empty, then the report still goes to bench/results/local/', () => {
    expect(resultsPath(root, 'soak.md', { BENCH_RECORD: '0' })).toBe(join(root, 'bench', 'results', 'local', 'soak.md'));
    expect(resultsPath(root, 'soak.md', { BENCH_RECORD: '' })).toBe(join(root, 'bench', 'results', 'local', 'soak.md'));
  });

  test('when BENCH_RECORD=1 or true, then the report goes to the tracked bench/results/', () => {
    expect(resultsPath(root, 'latest.md', { BENCH_RECORD: '1' })).toBe(join(root, 'bench', 'results', 'latest.md'));
    expect(resultsPath(root, 'pets-scale.md', { BENCH_RECORD: 'true' })).toBe(join(root, 'bench', 'results', 'pets-scale.md'));
  });

  test('when a report is written without BENCH_RECORD, then only bench/results/local/ holds it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'asg-results-'));
    const stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      writeResults(dir, 'latest.md', '| table |', {});
      expect(readFileSync(join(dir, 'bench', 'results', 'local', 'latest.md'), 'utf8')).toBe('| table |\n');
      expect(existsSync(join(dir, 'bench', 'results', 'latest.md'))).toBe(false);
    } finally {
      stderr.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
