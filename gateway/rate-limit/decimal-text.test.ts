import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { decimalText } from './decimal-text';

describe('decimalText', () => {
  it('writes every count as String does', () => {
    const samples = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 1010, 9999, 10_000, 100_001, 999_999, 1_000_000, 1_000_001, 1_002_003, 9_999_999, 10_000_000, 999_999_999];
    for (let n = 0; n < 3000; n++) samples.push(n, n * 997, n * 1_000_003 + 7);
    for (const n of samples) expect(decimalText(n)).toBe(String(n));
  });

  it('falls back to String outside the counts it is made for', () => {
    for (const n of [1e9, 123_456_789_012, -1, -1000, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(decimalText(n)).toBe(String(n));
  });

  // The reason it exists: 200,000 distinct counts (one per request) must not reach the old
  // generation. Through V8's number-to-string cache they promote about 4.8 MB; here under 0.1 MB.
  it('leaves nothing in the old generation when every call formats a new count', () => {
    const promotedBy = (formatter: string) =>
      Number(
        execFileSync(
          process.execPath,
          [
            '--expose-gc',
            '--import',
            'tsx',
            '-e',
            `
            const v8 = require('node:v8');
            const { decimalText } = require(${JSON.stringify(join(__dirname, 'decimal-text.ts'))});
            const format = ${formatter};
            const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size;
            gc();
            const before = oldSpace();
            let length = 0;
            for (let n = 9_999_999; n > 9_799_999; n--) {
              length += format(n).length;
              if (n % 2000 === 0) gc({ type: 'minor' });
            }
            gc({ type: 'minor' }); gc({ type: 'minor' });
            process.stdout.write(String(oldSpace() - before));
          `,
          ],
          { env: { ...process.env, NODE_OPTIONS: '' } },
        ),
      );
    // The measurement itself: String(n) does promote here, so a low figure below means something.
    expect(promotedBy('(n) => `r=${n}`')).toBeGreaterThan(2_000_000);
    expect(promotedBy('(n) => `r=${decimalText(n)}`')).toBeLessThan(500_000);
  });
});
