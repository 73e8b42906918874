/* global console, process -- a Node script */
// `npm run screenshots`: runs the browser tests that photograph what docs/portal.md shows, then
// copies their pictures from test-results/screenshots/ into docs/screenshots/. Needs Chromium
// (see test/browser/support/browser.ts); the dates in the pictures are the day it runs.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Test file → the pictures it takes (test-results name → docs name). */
const SHOTS = {
  'test/browser/usage-chart.test.ts': {
    'keys-usage-desktop.png': 'keys-usage.png',
    'keys-usage-key-desktop.png': 'keys-usage-key.png',
    'keys-usage-phone.png': 'keys-usage-phone.png',
  },
  'test/browser/key-requests.test.ts': {
    'keys-request-log-desktop.png': 'keys-request-log.png',
    'keys-request-log-phone.png': 'keys-request-log-phone.png',
  },
};

// The browser tier as package.json runs it (its Node options and tier), limited to these files.
const run = spawnSync('npm', ['run', '--silent', 'test:browser', '--', '-i', ...Object.keys(SHOTS)], { cwd: root, stdio: 'inherit' });
if (run.status !== 0) process.exit(run.status ?? 1);
for (const pictures of Object.values(SHOTS)) {
  for (const [taken, shown] of Object.entries(pictures)) {
    const from = join(root, 'test-results', 'screenshots', taken);
    if (!existsSync(from)) throw new Error(`The browser tests took no ${taken}`);
    copyFileSync(from, join(root, 'docs', 'screenshots', shown));
    console.log(`docs/screenshots/${shown}`);
  }
}
