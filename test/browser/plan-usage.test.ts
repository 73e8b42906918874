import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Database } from '../../db/database';
import { monthOf, nextMonthStart } from '../../identity/month';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { prepareStore, putPlan } from '../support/plans';
import { axeViolations, seriousOrCritical } from './support/axe';
import { DESKTOP, horizontalOverflow, launchChromium, PHONE, screenshot, signedInContext, watchConsole } from './support/browser';

/** The day the quota renews as the page writes it (its context: en-GB, UTC). */
const renewsOn = () => new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' }).format(nextMonthStart(new Date()));

/**
 * The keys page's plan panel: the plan, its per-minute limit and this month's usage as a
 * progress bar, with a written warning from 80% of the monthly quota; accounts without a quota
 * see their count alone. Accounts are put on a metered plan (set in PostgreSQL before the gateway
 * starts) and given most of their month's count in the usage table, the rest through the API.
 */
describe('keys page plan and usage (real Chromium)', () => {
  let testDb: TestDatabase;
  let db: Database;
  let gw: TestGateway;
  let browser: Browser;

  /** A developer on `plan` whose month so far is `stored` requests in the table plus `sent` through the API. */
  async function developerWith(plan: string, stored: number, sent: number): Promise<Developer> {
    const dev = await signUpDeveloper(gw.url);
    await db.query('UPDATE accounts.accounts SET plan = $2 WHERE id = $1', [dev.accountId, plan]);
    await db.query('INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, $2::date, $3)', [dev.accountId, monthOf(new Date()), stored]);
    for (let i = 0; i < sent; i++) expect((await fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } })).status).toBe(200);
    return dev;
  }

  async function openKeysPage(dev: Developer, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await signedInContext(browser, gw.url, dev.cookie, viewport);
    const page = await context.newPage();
    await page.goto('/portal/keys');
    await page.locator('[data-plan]').waitFor();
    return { context, page };
  }

  /** What the panel says and shows: its texts, the bar's values and accessible name, and whether it warns. */
  async function panelOf(page: Page) {
    const panel = page.locator('#plan-panel');
    const bar = panel.getByRole('progressbar');
    const barShown = await bar.isVisible();
    return {
      summary: await panel.locator('[data-plan-summary]').textContent(),
      usage: await panel.locator('[data-usage-text]').textContent(),
      bar: barShown ? { labelledBy: await bar.getAttribute('aria-labelledby'), value: await bar.getAttribute('value'), max: await bar.getAttribute('max') } : null,
      renewal: await panel.locator('[data-usage-renewal]').textContent(),
      warning: (await panel.locator('[data-usage-warning]').isVisible()) ? await panel.locator('[data-usage-warning]').textContent() : null,
      warningStyle: await panel.locator('[data-usage-meter]').evaluate((node) => node.classList.contains('usage-meter-warning')),
    };
  }

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    await prepareStore(testDb.settings, (prepared) => putPlan(prepared, 'metered', 600, 100_000));
    [gw, browser] = await Promise.all([startTestGateway({ env: { DATABASE_URL: testDb.settings.databaseUrl! } }), launchChromium()]);
    db = await testDb.open();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await db?.close();
    await testDb?.destroy();
  });

  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`when 85% of the monthly quota is used, then at ${label} width the bar says how much of how much, with an accessible warning`, async () => {
      const dev = await developerWith('metered', 84_995, 5);
      const { context, page } = await openKeysPage(dev, viewport);
      try {
        const console_ = watchConsole(page);
        expect(await panelOf(page)).toEqual({
          summary: 'Your account is on the metered plan: 600 requests per minute in each environment, shared by all your keys, and 100,000 requests per calendar month (UTC) in both together.',
          usage: '85,000 of 100,000 requests this month',
          bar: { labelledBy: 'usage-text', value: '85000', max: '100000' },
          renewal: `The quota renews on ${renewsOn()}.`,
          warning: `You have used 85% of this month’s quota. Once it is used up, the API answers 429 quota_exceeded until ${renewsOn()}.`,
          warningStyle: true,
        });
        // The bar is named by its text and described by the warning.
        const bar = page.getByRole('progressbar', { name: '85,000 of 100,000 requests this month' });
        await expect(bar.getAttribute('aria-describedby')).resolves.toBe('usage-warning');
        await screenshot(page, `keys-plan-usage-warning-${label}`);
        expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);
        expect(console_.problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }

  test('when less than 80% of the monthly quota is used, then the bar shows it without a warning', async () => {
    const dev = await developerWith('metered', 79_998, 1);
    const { context, page } = await openKeysPage(dev, DESKTOP);
    try {
      expect(await panelOf(page)).toMatchObject({ usage: '79,999 of 100,000 requests this month', bar: { value: '79999', max: '100000' }, warning: null, warningStyle: false });
      expect(await page.getByRole('progressbar').getAttribute('aria-describedby')).toBeNull();
      expect(seriousOrCritical(await axeViolations(page, { include: '#plan-panel' }))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('when the plan has no monthly quota, then the month’s count is shown alone, with no bar', async () => {
    const dev = await developerWith('default', 12_340, 5);
    const { context, page } = await openKeysPage(dev, DESKTOP);
    try {
      expect(await panelOf(page)).toEqual({
        summary: 'Your account is on the default plan: 600 requests per minute in each environment, shared by all your keys.',
        usage: '12,345 requests this month (no monthly quota)',
        bar: null,
        renewal: `The count starts again on ${renewsOn()}.`,
        warning: null,
        warningStyle: false,
      });
      await screenshot(page, 'keys-plan-usage-no-quota');
      expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
