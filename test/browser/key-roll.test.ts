import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { jsonOf } from '../support/http';
import { axeViolations, seriousOrCritical } from './support/axe';
import { launchChromium, signedInContext, watchConsole } from './support/browser';

/**
 * Rolling a key on the keys page: the new secret is shown once, both secrets work through the
 * overlap, the list links the pair, and the old one answers 401 once the clock passes the overlap.
 */
describe('keys page: roll a key (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let dev: Developer;
  let context: BrowserContext;
  let page: Page;

  const call = (key: string) => fetch(`${gw.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
    dev = await signUpDeveloper(gw.url);
    context = await signedInContext(browser, gw.url, dev.cookie);
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await gw?.stop();
  });

  test('when a key is rolled with a 1 h overlap, then both secrets answer 200 until the clock passes the overlap, and the old one then 401', async () => {
    const console_ = watchConsole(page);
    const old = await dev.issueKey({ name: 'ci runner' });
    await page.goto('/portal/keys');
    const oldRow = page.locator(`tr[data-key-id="${old.id}"]`);
    await oldRow.getByRole('button', { name: 'Roll key ci runner' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll “ci runner”?' });
    await expect(dialog.getByRole('code').textContent()).resolves.toBe(old.key.slice(0, 15));
    await dialog.getByLabel('For 1 hour').check();
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await dialog.getByRole('button', { name: 'Roll key' }).click();

    const secret = page.getByLabel(/^API key/);
    await secret.waitFor();
    await expect(secret.inputValue()).resolves.toMatch(/^asg_prod_/);
    const fresh = await secret.inputValue();
    expect(fresh).not.toBe(old.key);
    await oldRow.locator('[data-rolled-to]').waitFor();
    await expect(oldRow.locator('[data-rolled-to]').textContent()).resolves.toMatch(/^Rolled to asg_prod_.{6}…; works until it expires in (60 minutes|1 hour)$/);
    expect(await oldRow.getByRole('button', { name: /Roll/ }).count()).toBe(0);
    await expect(page.locator('[data-rolled-from]').textContent()).resolves.toMatch(/^Replaces asg_prod_/);
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);

    expect((await call(old.key)).status).toBe(200);
    expect((await call(fresh)).status).toBe(200);
    gw.clock.set(new Date(Date.now() + 61 * 60_000));
    const refused = await call(old.key);
    expect(refused.status).toBe(401);
    expect(await jsonOf(refused)).toEqual({ code: 'unauthorized', message: 'This API key has expired.', status: 401 });
    expect((await call(fresh)).status).toBe(200);
    gw.clock.reset();
    expect(console_.problems).toEqual([]);
  });

  test('when a key expires within 7 days, then its row carries an "expires" badge', async () => {
    const soon = await dev.issueKey({ name: 'short lived', expiresInDays: 3 });
    await page.goto('/portal/keys');
    const badge = page.locator(`tr[data-key-id="${soon.id}"] [data-expires-soon]`);
    await expect(badge.textContent()).resolves.toMatch(/^Expires in (3|2) days$/);
    const later = await dev.issueKey({ name: 'long lived', expiresInDays: 30 });
    await page.reload();
    await page.locator(`tr[data-key-id="${later.id}"]`).waitFor();
    expect(await page.locator(`tr[data-key-id="${later.id}"] [data-expires-soon]`).count()).toBe(0);
  });
});
