import type { Browser, BrowserContext } from 'playwright-core';
import { startRecordingUpstream } from '../support/upstream-double';
import { launchChromium, newContext } from './support/browser';

/** A stalled navigation in a browser test says which side stalled (see support/navigation-diagnosis.ts). */
describe('when a browser test navigation fails (real Chromium)', () => {
  let site: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let origin: string;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    // /stalled's script never arrives, so its load event never fires; everything else answers at once.
    site = await startRecordingUpstream((req, res) => {
      if (req.url === '/stalled') res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>s</title><script src="/never.js"></script>');
      else if (req.url !== '/never.js') res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>ok</title>');
    });
    origin = site.url;
    browser = await launchChromium();
  });
  beforeEach(async () => {
    context = await newContext(browser, origin);
  });
  afterEach(() => context.close());
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  test('then its error lists what Chromium still waited for in that navigation, what Node got for the same URL, and whether a fresh page could load it', async () => {
    const page = await context.newPage();
    await page.goto('/');
    const failure = await page.goto('/stalled', { timeout: 1500 }).then(
      () => new Error('the navigation succeeded'),
      (err: Error) => err,
    );
    expect(failure.message).toMatch(/^page\.goto: Timeout 1500ms exceeded/);
    expect(failure.message).toContain('Why the navigation failed');
    expect(failure.message).toMatch(new RegExp(`GET ${origin}/stalled: 200 after \\d+ ms`));
    expect(failure.message).toMatch(new RegExp(`GET ${origin}/never.js: no response yet, \\d+ ms on`));
    // The page's earlier navigation is not part of this one's story.
    expect(failure.message).not.toContain(`GET ${origin}/: `);
    expect(failure.message).toMatch(/the same URL fetched from Node: 200 in \d+ ms/);
    expect(failure.message).toMatch(/the browser: connected; a fresh page in the same context: got 200 in \d+ ms/);
    // The probe's page is closed again: only the test's own page remains.
    expect(context.pages()).toEqual([page]);
  });

  test('then a navigation that succeeds is untouched', async () => {
    const page = await context.newPage();
    const res = await page.goto('/');
    expect(res?.status()).toBe(200);
    expect(context.pages()).toEqual([page]);
  });
});
