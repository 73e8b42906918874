import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { isFocused, launchChromium, signedInContext, watchConsole } from './support/browser';

/**
 * The keys page when the account holds MAX_KEYS_PER_ACCOUNT active keys: the refusal says the
 * limit and the way out, and revoking a key on the page lets the next one be created.
 */
describe('keys page at the key cap (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let dev: Developer;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway({ env: { MAX_KEYS_PER_ACCOUNT: '2' } }), launchChromium()]);
    dev = await signUpDeveloper(gw.url); // a production and a staging key: the cap
    context = await signedInContext(browser, gw.url, dev.cookie);
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await gw?.stop();
  });

  test('when the account is at its cap, then creating a key shows the limit and how to free a slot; after a revoke the key is created', async () => {
    const console_ = watchConsole(page);
    await page.goto('/portal/keys');
    await page.getByRole('row', { name: /staging key/ }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('third');
    await page.getByRole('button', { name: 'Create key' }).click();
    const refusal = page.locator('#create-error');
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toBe(
      'Could not create the key: This account already has 2 active keys, the most it may hold; revoke one to create another.',
    );
    await expect(refusal.getAttribute('role')).resolves.toBe('alert');
    expect(await isFocused(refusal)).toBe(true);
    expect(await page.getByLabel(/^API key/).isVisible()).toBe(false);

    const row = page.getByRole('row', { name: /staging key/ });
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('dialog', { name: /Revoke/ }).getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('Revoked').waitFor();

    await page.getByLabel('Name', { exact: true }).fill('third');
    await page.getByRole('button', { name: 'Create key' }).click();
    // The secret's field is on the page, hidden and empty, from the start: it shows once the key is created.
    await page.getByLabel(/^API key/).waitFor();
    await expect(page.getByLabel(/^API key/).inputValue()).resolves.toMatch(/^asg_prod_/);
    expect(await refusal.isHidden()).toBe(true);
    // The 409 is the answer the test asked for: Chromium logs it as a failed load, nothing else may appear.
    expect(console_.problems.filter((p) => !/status of 409/.test(p))).toEqual([]);
  });

  test('when a key name is only a zero-width space, then the name field says what a name needs', async () => {
    await page.goto('/portal/keys');
    await page.getByLabel('Name', { exact: true }).fill('\u200B');
    await page.getByRole('button', { name: 'Create key' }).click();
    const error = page.locator('#key-name-error');
    await error.waitFor();
    await expect(error.textContent()).resolves.toBe('Use 1 to 100 characters, some of them visible, without control or text-direction override characters.');
    await expect(page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
  });
});
