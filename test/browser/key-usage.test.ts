import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { jsonOf } from '../support/http';
import { axeViolations, seriousOrCritical } from './support/axe';
import { DESKTOP, horizontalOverflow, launchChromium, PHONE, screenshot, signedInContext, watchConsole, watchOrigins } from './support/browser';
import type { PageWindow } from './support/page-globals';

const WARNING =
  'Action needed: This key called the deprecated GET /v1/pets/{petId} 3 times, last on 20 Nov 2026. ' +
  'That operation stops working on 5 December 2030 — use GET /v1/pets instead. How to migrate';

/**
 * The keys page tells a developer which key still calls the deprecated GET /pets/{petId},
 * how often and until when, with the way out, at desktop and phone width.
 */
describe('keys page usage and deprecation warning (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let dev: Developer;
  let legacy: { id: string; key: string };

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
    dev = await signUpDeveloper(gw.url);
    legacy = await dev.issueKey({ name: 'legacy client' });
    const created = await fetch(`${gw.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.productionKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Old habits', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const petId = (await jsonOf(created)).id as number;
    const call = async (path: string) => expect((await fetch(gw.url + path, { headers: { authorization: `Bearer ${legacy.key}` } })).status).toBe(200);
    gw.clock.set('2026-11-20T15:30:00.000Z');
    for (let i = 0; i < 3; i++) await call(`/v1/pets/${petId}`);
    await call('/v1/pets');
    gw.clock.reset();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function openKeysPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await signedInContext(browser, gw.url, dev.cookie, viewport);
    const page = await context.newPage();
    return { context, page };
  }

  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`when a key called the deprecated operation, then at ${label} width its row shows the requests and an accessible warning linking to the deprecations page`, async () => {
      const { context, page } = await openKeysPage(viewport);
      try {
        const console_ = watchConsole(page);
        const outside = watchOrigins(page, gw.url);
        await page.goto('/portal/keys');
        const legacyRow = page.getByRole('row', { name: /legacy client/ });
        await legacyRow.waitFor();
        await expect(legacyRow.locator('[data-label="Requests"]').textContent()).resolves.toBe('4');
        await expect(page.getByRole('row', { name: /production key/ }).locator('[data-label="Requests"]').textContent()).resolves.toBe('1');

        const warning = page.locator(`[data-usage-warning-for="${legacy.id}"]`);
        await expect(warning.textContent()).resolves.toBe(WARNING);
        // Only the key that called it is warned about.
        expect(await page.locator('[data-usage-warning-for]').count()).toBe(1);
        await expect(warning.locator('time').first().getAttribute('datetime')).resolves.toBe('2026-11-20T15:30:00.000Z');
        // The key's name cell is described by the warning, so screen readers hear it with the key.
        const describedBy = await legacyRow.getByRole('rowheader').getAttribute('aria-describedby');
        expect(await warning.locator('p').getAttribute('id')).toBe(describedBy);

        await screenshot(page, `keys-deprecation-warning-${label}`);
        expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);

        const link = warning.getByRole('link', { name: 'How to migrate' });
        await expect(link.getAttribute('href')).resolves.toBe('/portal/deprecations');
        await link.click();
        await page.waitForURL('**/portal/deprecations');
        await page.getByRole('heading', { name: /GET \/pets\/\{petId\} — removed on 5 December 2030/ }).waitFor();
        const title = await page.evaluate(() => (globalThis as unknown as PageWindow).document.getElementById('get-pet')?.textContent);
        expect(title).toContain('5 December 2030');
        expect(console_.problems).toEqual([]);
        expect(outside).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
