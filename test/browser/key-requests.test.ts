import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { axeViolations, seriousOrCritical } from './support/axe';
import { DESKTOP, horizontalOverflow, isFocused, launchChromium, PHONE, screenshot, signedInContext, watchConsole, watchOrigins } from './support/browser';

/** The table's rows as the page shows them: status, code, cache and request id. */
async function shownRows(page: Page): Promise<string[][]> {
  const rows = page.locator('#requests-panel tbody tr');
  const out: string[][] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    const cell = async (label: string) => ((await row.locator(`[data-label="${label}"]`).textContent()) ?? '').trim();
    out.push([await cell('Method'), await cell('Path'), await cell('Status'), await cell('Code'), await cell('Cache'), await cell('Request id')]);
  }
  return out;
}

/**
 * The keys page's "Recent requests": a developer's calls with known outcomes appear in the
 * page's log, can be filtered by outcome, found by their X-Request-Id and paged with
 * "Load more", at desktop and phone width, with no serious axe violation.
 */
describe('keys page request log (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let dev: Developer;
  let key: { id: string; key: string };
  /** method, path, status, code, cache and request id of the known calls, oldest first. */
  const known: string[][] = [];
  const FLOOD = 50;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway({ env: { RATE_LIMIT_PER_MINUTE: '4' } }), launchChromium()]);
    dev = await signUpDeveloper(gw.url);
    key = await dev.issueKey({ name: 'logged client' });
    const call = async (path: string) => {
      const res = await fetch(gw.url + path, { headers: { authorization: `Bearer ${key.key}` } });
      await res.arrayBuffer();
      return res;
    };
    for (const [path, status, code, cache] of [
      ['/v1/pets?limit=3', '200', '', 'MISS'],
      ['/v1/pets?limit=3', '200', '', 'HIT'],
      ['/v1/pets/999999', '404', 'not_found', ''],
      ['/v1/pets?limit=abc', '400', 'invalid_request', ''],
      ['/v1/pets?limit=3', '429', 'rate_limited', ''],
    ] as const) {
      const res = await call(path);
      expect(res.status).toBe(Number(status));
      known.push(['GET', path, status, code, cache, res.headers.get('x-request-id')!]);
    }
    // Enough refusals after them that the known calls are on the second page.
    for (let i = 0; i < FLOOD; i++) expect((await call('/v1/pets')).status).toBe(429);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function openKeysPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await signedInContext(browser, gw.url, dev.cookie, viewport);
    const page = await context.newPage();
    await page.goto('/portal/keys');
    await page.getByRole('row', { name: /logged client/ }).waitFor();
    return { context, page };
  }

  const status = (page: Page) => page.locator('#requests-panel [data-requests-status]');

  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`when a key's Requests button is pressed at ${label} width, then its calls are listed newest first, and Load more brings the older ones`, async () => {
      const { context, page } = await openKeysPage(viewport);
      try {
        const console_ = watchConsole(page);
        const outside = watchOrigins(page, gw.url);
        await page.getByRole('button', { name: 'Requests of key logged client' }).click();
        await status(page).filter({ hasText: 'Showing' }).waitFor();
        await expect(status(page).textContent()).resolves.toBe('Showing 50 requests of “logged client”, newest first; more are available.');
        expect(await isFocused(page.getByRole('heading', { name: 'Recent requests' }))).toBe(true);
        await expect(page.getByRole('combobox', { name: 'Key' }).inputValue()).resolves.toBe(key.id);
        const table = page.getByRole('table', { name: 'Recent requests of “logged client”, newest first' });
        await table.waitFor();
        const firstPage = await shownRows(page);
        expect(firstPage).toHaveLength(50);
        expect(firstPage.every(([method, path, code]) => method === 'GET' && path === '/v1/pets' && code === '429')).toBe(true);
        expect(seriousOrCritical(await axeViolations(page))).toEqual([]);

        await page.getByRole('button', { name: 'Load more' }).click();
        await status(page).filter({ hasText: 'Showing 55' }).waitFor();
        await expect(status(page).textContent()).resolves.toBe('Showing 55 requests of “logged client”, newest first.');
        expect(await page.getByRole('button', { name: 'Load more' }).isVisible()).toBe(false);
        const rows = await shownRows(page);
        expect(rows.slice(50)).toEqual([...known].reverse());
        // The reader goes on from the first row the button brought.
        expect(await isFocused(page.locator('#requests-panel tbody tr').nth(50).locator('th'))).toBe(true);

        await screenshot(page, `keys-request-log-${label}`);
        expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);
        expect(console_.problems).toEqual([]);
        expect(outside).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }

  test("when the panel's script arrives after the keys are listed, then the Requests button still lists that key's calls", async () => {
    const context = await signedInContext(browser, gw.url, dev.cookie, DESKTOP);
    const page = await context.newPage();
    try {
      // A slow network: keys.js has fetched and listed the keys before key-requests.js has even run.
      await page.route(/\/key-requests\.js/, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await route.continue();
      });
      await page.goto('/portal/keys');
      await page.waitForLoadState('domcontentloaded');
      await page.getByRole('button', { name: 'Requests of key logged client' }).click();
      await status(page).filter({ hasText: 'Showing 50' }).waitFor();
      await expect(page.getByRole('combobox', { name: 'Key' }).inputValue()).resolves.toBe(key.id);
    } finally {
      await context.close();
    }
  });

  test('when an outcome is chosen, then only those requests are listed, and the status line says so', async () => {
    const { context, page } = await openKeysPage(DESKTOP);
    try {
      await page.getByRole('button', { name: 'Requests of key logged client' }).click();
      await status(page).filter({ hasText: 'Showing 50' }).waitFor();
      const outcome = page.getByLabel('Outcome');
      await outcome.selectOption({ label: '4xx client error (except 429)' });
      await status(page).filter({ hasText: '4xx client errors' }).waitFor();
      expect(await shownRows(page)).toEqual([known[3], known[2]]);
      await expect(status(page).textContent()).resolves.toBe('Showing 2 requests of “logged client” (4xx client errors), newest first.');
      await outcome.selectOption({ label: '2xx success (3xx included)' });
      await status(page).filter({ hasText: '2xx success' }).waitFor();
      expect(await shownRows(page)).toEqual([known[1], known[0]]);
      await outcome.selectOption({ label: '5xx server error' });
      await status(page).filter({ hasText: 'No requests' }).waitFor();
      await expect(status(page).textContent()).resolves.toBe('No requests of “logged client” match (5xx server errors).');
      expect(await page.getByRole('table').filter({ hasText: 'Request id' }).isVisible()).toBe(false);
      await outcome.selectOption({ label: '429 rate limited' });
      await status(page).filter({ hasText: '429 rate limited' }).waitFor();
      await expect(status(page).textContent()).resolves.toBe('Showing 50 requests of “logged client” (429 rate limited), newest first; more are available.');
      expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('when a request id from X-Request-Id is looked for, then that one request is found; a malformed id is pointed out at the field', async () => {
    const { context, page } = await openKeysPage(DESKTOP);
    try {
      const field = page.getByLabel(/^Find by request id/);
      await field.fill(known[2]![5]!);
      await page.getByRole('button', { name: 'Show requests' }).click();
      await status(page).filter({ hasText: 'request id' }).waitFor();
      expect(await shownRows(page)).toEqual([known[2]]);
      await expect(status(page).textContent()).resolves.toBe(`Showing 1 request of “logged client” (request id ${known[2]![5]}), newest first.`);

      await field.fill('not an id!');
      await page.getByRole('button', { name: 'Show requests' }).click();
      const error = page.locator('#requests-id-error');
      await error.waitFor();
      await expect(error.textContent()).resolves.toBe('Enter a request id as a response carried it: up to 128 letters, digits, “.”, “_”, “:” or “-”.');
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
      expect(await isFocused(field)).toBe(true);
      expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
