import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { isFocused, launchChromium, newContext, watchConsole, watchOrigins, webStorage } from './support/browser';
import type { PageWindow } from './support/page-globals';

/** Swagger UI at /docs/ and /docs/portal/, as a developer sees it. */
describe('API reference in Swagger UI (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let outside: string[];

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
  });

  beforeEach(async () => {
    context = await newContext(browser, gw.url);
    page = await context.newPage();
    problems = watchConsole(page).problems;
    outside = watchOrigins(page, gw.url);
  });

  afterEach(async () => {
    await context?.close();
    // Everything comes from the gateway itself: no CDN, no online validator badge.
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  const afterContent = (selector: string) =>
    page.locator(selector).evaluate((el) => (globalThis as unknown as PageWindow).getComputedStyle(el, '::after').content);

  test('when /docs/ opens, then it loads /openapi.json with the agreed options and offers Production and Staging', async () => {
    await page.goto('/docs/');
    await page.locator('.opblock').first().waitFor();
    const configs = await page.evaluate(() => {
      const c = (globalThis as unknown as PageWindow).ui.getConfigs();
      return {
        url: c.url,
        tryItOutEnabled: c.tryItOutEnabled,
        displayRequestDuration: c.displayRequestDuration,
        deepLinking: c.deepLinking,
        requestSnippetsEnabled: c.requestSnippetsEnabled,
        persistAuthorization: c.persistAuthorization,
        validatorUrl: c.validatorUrl,
      };
    });
    expect(configs).toEqual({
      url: '/openapi.json',
      tryItOutEnabled: true,
      displayRequestDuration: true,
      deepLinking: true,
      requestSnippetsEnabled: true,
      persistAuthorization: false,
      validatorUrl: null,
    });
    const servers = page.getByLabel('Servers');
    expect(await servers.locator('option').allTextContents()).toEqual([
      '/v1 - Production',
      '/staging/v1 - Staging (sandbox data, separate from production; use a staging key)',
    ]);
    for (const tag of ['Pets', 'Store', 'Messages']) await page.getByRole('heading', { name: new RegExp(`^${tag}`) }).waitFor();
    expect(await page.locator('.swagger-ui .topbar').count()).toBe(0);
  });

  test('when the operations are listed, then the deprecated one says so with its sunset date and beta and experimental ones are marked', async () => {
    await page.goto('/docs/');
    const getPet = page.locator('#operations-Pets-getPet');
    await getPet.waitFor();
    await expect(getPet.getAttribute('class')).resolves.toContain('opblock-deprecated');
    await expect(afterContent('#operations-Pets-getPet .opblock-summary-path__deprecated')).resolves.toBe('"Deprecated · removed 5 Dec 2030"');
    await expect(afterContent('#operations-Messages-createMessage .opblock-summary-path')).resolves.toBe('"Beta"');
    await expect(afterContent('#operations-Store-listOrders .opblock-summary-path')).resolves.toBe('"Experimental"');
    await expect(afterContent('#operations-Pets-listPets .opblock-summary-path')).resolves.toBe('none');
    // The badge is part of the summary button's accessible name, so screen readers hear it too.
    await page.getByRole('button', { name: /\/messages.*Beta/ }).waitFor();

    await getPet.locator('.opblock-summary-control').click();
    await getPet.getByText('Warning: Deprecated').waitFor();
    await getPet.getByText(/removed on 5 December 2030/).first().waitFor();
    await getPet.getByText('2030-12-05T00:00:00Z').waitFor();
    // Deep links keep working without the anchor inside the button: the address follows.
    await page.waitForURL('**/docs/#/Pets/getPet');
  });

  test('when /docs/portal/ opens, then it shows the portal API only, and /docs/ afterwards the public API only', async () => {
    await page.goto('/docs/portal/');
    await page.locator('#operations-Account-signup').waitFor();
    await expect(page.evaluate(() => (globalThis as unknown as PageWindow).ui.getConfigs().url)).resolves.toBe('/portal/openapi.json');
    expect(await page.locator('#operations-Pets-listPets').count()).toBe(0);
    expect(await page.getByLabel('Servers').locator('option').allTextContents()).toEqual(["/portal/api - This deployment's portal API."]);
    await expect(page.getByRole('link', { name: 'Portal API', exact: true }).first().getAttribute('aria-current')).resolves.toBe('page');

    await page.getByRole('navigation', { name: 'API documents' }).getByRole('link', { name: 'Animal Store API' }).click();
    await page.waitForURL('**/docs/');
    await page.locator('#operations-Pets-listPets').waitFor();
    expect(await page.locator('#operations-Account-signup').count()).toBe(0);
  });

  test('when a developer authorizes and reloads, then the key is not kept anywhere', async () => {
    await page.goto('/docs/');
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Available authorizations' });
    // Focus moves into the dialog, to the key field.
    await expect(isFocused(dialog.getByLabel('Value:'))).resolves.toBe(true);
    await dialog.getByLabel('Value:').fill('asg_prod_' + 'x'.repeat(43));
    await dialog.getByRole('button', { name: /apply credentials/i }).click();
    await dialog.getByRole('button', { name: /remove authorization/i }).waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // Focus returns to the button that opened the dialog.
    await expect(page.evaluate(() => (globalThis as unknown as PageWindow).document.activeElement?.textContent)).resolves.toContain('Authorize');

    await page.reload();
    await page.locator('.opblock').first().waitFor();
    expect(await webStorage(page)).toEqual({ local: 0, session: 0, text: '[{},{}]' });
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).ui.authSelectors.authorized().size)).toBe(0);
  });

  test('when a key handed over by the keys page is malformed, then it is dropped and nothing is authorized', async () => {
    await page.goto('/portal/');
    await page.evaluate(() =>
      (globalThis as unknown as PageWindow).sessionStorage.setItem('asg:explorer-key', JSON.stringify({ key: 'not a key', environment: 'production' })),
    );
    await page.goto('/docs/');
    await page.locator('.opblock').first().waitFor();
    expect((await webStorage(page)).session).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).ui.authSelectors.authorized().size)).toBe(0);
    await expect(page.locator('[data-explorer-status]').textContent()).resolves.toBe('');
  });
});
