import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { launchChromium, signedInContext, watchConsole } from './support/browser';

/**
 * The keys page when a roll or revoke fails: another tab changed the key or ended the session
 * after the list was drawn. The page says why above the list, or sends a lapsed session to log in.
 */
describe('keys page: a roll or revoke that fails (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let dev: Developer;
  let context: BrowserContext;
  let page: Page;

  const call = (key: string) => fetch(`${gw.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  /** Console problems but Chromium's own line for the refused call, which it logs for every 4xx. */
  const besidesRefusal = (problems: string[], status: number) => problems.filter((p) => !p.includes(`status of ${status}`));

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
  });

  beforeEach(async () => {
    dev = await signUpDeveloper(gw.url);
    context = await signedInContext(browser, gw.url, dev.cookie);
    page = await context.newPage();
  });

  afterEach(async () => {
    await context?.close();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  test('when the key was rolled in another tab, then rolling it again says why above the list', async () => {
    const console_ = watchConsole(page);
    const key = await dev.issueKey({ name: 'deploy bot' });
    await page.goto('/portal/keys');
    const row = page.locator(`tr[data-key-id="${key.id}"]`);
    await row.waitFor();
    const elsewhere = await fetch(`${gw.url}/portal/api/keys/${key.id}/roll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: dev.cookie },
      body: JSON.stringify({ overlap: '1h' }),
    });
    expect(elsewhere.status).toBe(201);

    await row.getByRole('button', { name: 'Roll key deploy bot' }).click();
    await page.getByRole('dialog', { name: 'Roll “deploy bot”?' }).getByRole('button', { name: 'Roll key' }).click();
    const alert = page.getByRole('alert').filter({ hasText: /^Could not roll/ });
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toBe('Could not roll “deploy bot”: This key has already been rolled; roll its successor instead.');
    await expect(page.locator('#list-error:focus').count()).resolves.toBe(1);
    expect(new URL(page.url()).pathname).toBe('/portal/keys');
    expect(besidesRefusal(console_.problems, 409)).toEqual([]);
  });

  test('when the session ended in another tab, then revoking a key goes to the login page and the key keeps working', async () => {
    const console_ = watchConsole(page);
    const key = await dev.issueKey({ name: 'nightly export' });
    await page.goto('/portal/keys');
    await page.locator(`tr[data-key-id="${key.id}"]`).waitFor();
    const logout = await fetch(`${gw.url}/portal/api/logout`, { method: 'POST', headers: { origin: gw.url, cookie: dev.cookie } });
    expect(logout.status).toBe(204);

    await page.getByRole('button', { name: 'Revoke key nightly export' }).click();
    await page.getByRole('dialog', { name: 'Revoke “nightly export”?' }).getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForURL('**/portal/login?next=%2Fportal%2Fkeys');
    expect((await call(key.key)).status).toBe(200);
    expect(besidesRefusal(console_.problems, 401)).toEqual([]);
  });
});
