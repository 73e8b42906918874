import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { jsonOf } from '../support/http';
import { startRecordingUpstream } from '../support/upstream-double';
import { axeViolations, seriousOrCritical } from './support/axe';
import { DESKTOP, horizontalOverflow, isFocused, launchChromium, PHONE, screenshot, signedInContext, watchConsole, watchOrigins } from './support/browser';
import type { PageWindow } from './support/page-globals';
import { createKeyInBrowser } from './support/portal-flows';

const DAY_MS = 24 * 60 * 60 * 1000;
const RATE_LIMIT = 200;
const todayText = () => new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date());

/**
 * The keys page's usage section in Chromium: requests with known outcomes show up in the summary,
 * the chart's name and its table twin; a key's own usage opens from its row without losing the
 * page; the section works without JavaScript; axe finds nothing serious at desktop or phone width.
 */
describe('keys page usage chart (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let refusing: Awaited<ReturnType<typeof startRecordingUpstream>>;
  /** Known outcomes today: 198 × 200, 400, 404 and 2 × 429 with the production key, one 502 with staging. */
  let exact: Developer;
  let exactKeyId: string;
  /** A month of varied traffic, for the screenshots. */
  let history: Developer;

  const call = (path: string, key: string) => fetch(gw.url + path, { headers: { authorization: `Bearer ${key}` } }).then((res) => res.status);

  beforeAll(async () => {
    // Staging's upstream drops every connection: staging calls are the 5xx.
    refusing = await startRecordingUpstream((_req, res) => res.socket?.destroy());
    [gw, browser] = await Promise.all([
      startTestGateway({ env: { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), STAGING_UPSTREAM: refusing.url, CIRCUIT_FAILURE_THRESHOLD: '1000' } }),
      launchChromium(),
    ]);

    exact = await signUpDeveloper(gw.url);
    const keys: Array<{ id: string; environment: string }> = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: exact.cookie } }));
    exactKeyId = keys.find((k) => k.environment === 'production')!.id;
    const statuses: number[] = [await call('/v1/pets', exact.productionKey), await call('/v1/pets?limit=abc', exact.productionKey), await call('/v1/nowhere', exact.productionKey)];
    for (let i = 0; i < RATE_LIMIT - 3 + 2; i++) statuses.push(await call('/v1/pets', exact.productionKey));
    expect(statuses.slice(0, 3)).toEqual([200, 400, 404]);
    expect(statuses.slice(3)).toEqual([...Array<number>(RATE_LIMIT - 3).fill(200), 429, 429]);
    expect(await call('/staging/v1/pets', exact.stagingKey)).toBe(502);

    // Thirty days of a few requests each, some refused, a few failing upstream; today a burst hits the limit.
    history = await signUpDeveloper(gw.url);
    const midday = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2;
    for (let daysAgo = 29; daysAgo >= 0; daysAgo--) {
      gw.clock.set(new Date(midday - daysAgo * DAY_MS));
      const d = 29 - daysAgo;
      for (let i = 0; i < 3 + ((d * 5) % 7); i++) await call('/v1/pets', history.productionKey);
      if (d % 4 === 0) await call('/v1/pets?limit=abc', history.productionKey);
      if (d % 6 === 1) await call('/staging/v1/pets', history.stagingKey);
    }
    gw.clock.reset();
    for (let refused = 0, i = 0; refused < 3 && i < 2 * RATE_LIMIT; i++) if ((await call('/v1/pets', history.productionKey)) === 429) refused++;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await refusing?.close();
  });

  async function openKeysPage(dev: Developer, viewport: { width: number; height: number }, path = '/portal/keys'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await signedInContext(browser, gw.url, dev.cookie, viewport);
    const page = await context.newPage();
    await page.goto(path);
    await page.getByRole('row', { name: /staging key/ }).waitFor();
    return { context, page };
  }

  /** Today's row of the table twin, as its cells read. */
  const todayRow = (page: Page) =>
    page
      .locator('[data-usage-table] tbody tr')
      .last()
      .locator('th, td')
      .allTextContents();

  test('when the account made requests with known outcomes, then the summary, the chart and its table twin give the same numbers, and axe finds nothing serious', async () => {
    const { context, page } = await openKeysPage(exact, DESKTOP);
    try {
      const console_ = watchConsole(page);
      const outside = watchOrigins(page, gw.url);
      await page.reload();
      const section = page.getByRole('region', { name: 'Usage of all your keys' });
      const summary = '203 requests in the last 7 days, 2% errors.';
      await expect(section.locator('[data-usage-summary]').textContent()).resolves.toBe(summary);
      await expect(section.getByText('Errors are responses with a 4xx or 5xx status, 429 (rate limited) included.', { exact: false }).count()).resolves.toBe(1);
      const chart = section.getByRole('img', { name: `${summary} Requests per day, all your keys, last 30 days, by status.` });
      await expect(chart.count()).resolves.toBe(1);

      await section.getByText('Daily numbers (table)').click();
      const table = section.getByRole('table', { name: /^Requests per day, all your keys, .* \(UTC\); 4xx excludes 429$/ });
      await expect(table.locator('tbody tr').count()).resolves.toBe(30);
      await expect(table.getByRole('columnheader').allTextContents()).resolves.toEqual(['Day', '2xx–3xx', '4xx', '429', '5xx', 'Total']);
      await expect(todayRow(page)).resolves.toEqual([todayText(), '198', '2', '2', '1', '203']);
      await expect(table.locator('tfoot tr').locator('th, td').allTextContents()).resolves.toEqual(['30 days', '198', '2', '2', '1', '203']);
      await expect(table.locator('tbody tr').first().locator('td').allTextContents()).resolves.toEqual(['0', '0', '0', '0', '0']);

      expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);
      expect(console_.problems).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test("when a key's Usage link is followed, then the section shows that key in place, focused, and a secret on show stays on show", async () => {
    const { context, page } = await openKeysPage(exact, DESKTOP);
    try {
      const console_ = watchConsole(page);
      const shown = await createKeyInBrowser(page, { name: 'Just made' });
      const secret = page.getByLabel(/^API key/);

      await page.getByRole('row', { name: /production key/ }).getByRole('link', { name: '202 requests: daily usage of key production key' }).click();
      const heading = page.getByRole('heading', { name: 'Usage of “production key”' });
      await heading.waitFor();
      await expect(isFocused(heading)).resolves.toBe(true);
      expect(new URL(page.url()).search).toBe(`?usage=${exactKeyId}`);
      await expect(page.locator('[data-usage-summary]').textContent()).resolves.toBe('202 requests in the last 7 days, 2% errors.');
      await page.getByText('Daily numbers (table)').click();
      await expect(todayRow(page)).resolves.toEqual([todayText(), '198', '2', '2', '0', '202']);
      // No page load happened: the secret shown once is still there.
      await expect(secret.inputValue()).resolves.toBe(shown);

      await page.getByRole('link', { name: 'Show all keys' }).click();
      await page.getByRole('heading', { name: 'Usage of all your keys' }).waitFor();
      await page.goBack();
      await page.getByRole('heading', { name: 'Usage of “production key”' }).waitFor();
      await expect(secret.inputValue()).resolves.toBe(shown);
      expect(seriousOrCritical(await axeViolations(page, { include: '#usage' }))).toEqual([]);
      expect(console_.problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('when JavaScript is off, then a key named in the address still gets its summary, chart and table', async () => {
    const context = await signedInContext(browser, gw.url, exact.cookie, DESKTOP, { javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(`/portal/keys?usage=${exactKeyId}#usage`);
      await expect(page.locator('[data-usage-summary]').textContent()).resolves.toBe('202 requests in the last 7 days, 2% errors.');
      await expect(page.getByRole('img', { name: /^202 requests in the last 7 days/ }).count()).resolves.toBe(1);
      await page.getByText('Daily numbers (table)').click();
      await expect(todayRow(page)).resolves.toEqual([todayText(), '198', '2', '2', '0', '202']);
    } finally {
      await context.close();
    }
  });

  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`when an account has a month of traffic, then at ${label} width its chart, legend and table fit and are accessible`, async () => {
      const { context, page } = await openKeysPage(history, viewport);
      try {
        const console_ = watchConsole(page);
        const summary = await page.locator('[data-usage-summary]').textContent();
        expect(summary).toMatch(/^\d[\d,]* requests in the last 7 days, \d+% errors\.$/);
        await page.evaluate(() => (globalThis as unknown as PageWindow).document.fonts.ready);
        await page.locator('#usage').scrollIntoViewIfNeeded();
        await screenshot(page, `keys-usage-${label}`);
        await page.getByText('Daily numbers (table)').click();
        expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);
        if (label === 'desktop') {
          await page.getByRole('row', { name: /production key/ }).getByRole('link', { name: /daily usage of key production key$/ }).click();
          await page.getByRole('heading', { name: 'Usage of “production key”' }).waitFor();
          await screenshot(page, 'keys-usage-key-desktop');
        }
        expect(console_.problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
