import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { axeViolations, seriousOrCritical } from './support/axe';
import { launchChromium, newContext, watchConsole } from './support/browser';
import type { PageWindow } from './support/page-globals';
import { createKeyInBrowser, signUpInBrowser, uniqueEmail } from './support/portal-flows';

const run = promisify(execFile);

/** Runs a sample as a developer would paste it: curl in sh, fetch in Node, requests in Python. */
async function runSample(language: string, code: string): Promise<string> {
  const [command, args] =
    language === 'curl'
      ? ['sh', ['-c', `${code} --silent --output /dev/null --write-out '%{http_code}'`]]
      : language === 'js'
        ? [process.execPath, ['--input-type=module', '-e', code]]
        : ['python3', ['-c', code]];
  const { stdout } = await run(command, args, { timeout: 20_000 });
  return stdout.trim();
}

/**
 * The same call in curl, JavaScript and Python on the landing page and on each operation in the
 * docs, with the key "Use in API explorer" handed to the tab; each sample, run as copied, answers 200.
 */
describe('code samples with the developer\'s key (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
  });
  beforeEach(async () => {
    context = await newContext(browser, gw.url);
    page = await context.newPage();
  });
  afterEach(() => context?.close());
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  /** The text of one language's sample in a samples frame, after selecting its tab. */
  async function sampleText(frame: ReturnType<Page['locator']>, tab: string): Promise<string> {
    await frame.getByRole('tab', { name: tab, exact: true }).click();
    return (await frame.getByRole('tabpanel').locator('pre').textContent())!;
  }

  test('when no key was handed to the tab, then the landing page samples read ASG_KEY, in three languages with a copy button each, and axe is clean', async () => {
    const console_ = watchConsole(page);
    await page.goto('/portal/');
    const list = page.locator('[data-code-samples]').first();
    await expect(list.getByRole('tab').allTextContents()).resolves.toEqual(['curl', 'JavaScript', 'Python']);
    await expect(sampleText(list, 'curl')).resolves.toBe(`curl '${gw.url.replace('127.0.0.1', 'localhost')}/v1/pets?status=available&limit=20' \\\n     -H "Authorization: Bearer $ASG_KEY"`);
    await expect(sampleText(list, 'JavaScript')).resolves.toContain('Authorization: `Bearer ${process.env.ASG_KEY}`');
    await expect(sampleText(list, 'Python')).resolves.toContain(`headers={"Authorization": f"Bearer {os.environ['ASG_KEY']}"}`);
    // Arrow keys move between the tabs.
    await list.getByRole('tab', { name: 'Python' }).focus();
    await page.keyboard.press('ArrowRight');
    await expect(list.getByRole('tab', { name: 'curl' }).getAttribute('aria-selected')).resolves.toBe('true');
    await expect(list.getByRole('tabpanel').getByRole('button', { name: 'Copy the curl sample' }).count()).resolves.toBe(1);
    expect(await page.locator('[data-tab-key-note]').isHidden()).toBe(true);
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    expect(console_.problems).toEqual([]);
  });

  /** Hands the key just created to this tab's API explorer, and waits until it says so. */
  const useInExplorer = async () => {
    await page.getByRole('button', { name: 'Use in API explorer' }).click();
    await page.waitForURL('**/docs/#/Pets/listPets');
    await page.getByRole('status').filter({ hasText: 'Authorized in this tab' }).waitFor();
  };

  test('when a key is used in the API explorer, then the operation\'s and the landing page\'s samples carry it, and each runs as copied with 200', async () => {
    const console_ = watchConsole(page);
    await signUpInBrowser(page, uniqueEmail('samples'));
    const secret = await createKeyInBrowser(page, { name: 'Samples' });
    await useInExplorer();

    const operation = page.locator('#operations-Pets-listPets');
    const samples = operation.getByRole('region', { name: 'Code samples' });
    await samples.locator('pre').first().filter({ hasText: secret }).waitFor();
    for (const [tab, language] of [['curl', 'curl'], ['JavaScript', 'js'], ['Python', 'python']] as const) {
      const code = await sampleText(samples, tab);
      expect(code).toContain(secret);
      await expect(runSample(language, code)).resolves.toMatch(/^200\b/);
    }
    // The copy button copies exactly what the panel shows.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    await samples.getByRole('button', { name: 'Copy the Python sample' }).click();
    await expect(page.evaluate(() => (globalThis as unknown as PageWindow).navigator.clipboard.readText())).resolves.toBe(await sampleText(samples, 'Python'));

    const create = page.locator('#operations-Pets-createPet');
    await create.getByRole('button', { name: /POST.*\/pets/ }).first().click();
    const createCurl = await sampleText(create.getByRole('region', { name: 'Code samples' }), 'curl');
    expect(createCurl).toContain("-X POST");
    expect(createCurl).toContain("-H 'Content-Type: application/json'");
    await expect(runSample('curl', createCurl)).resolves.toBe('201');

    await page.goto('/portal/');
    const note = page.locator('[data-tab-key-note]');
    await note.waitFor();
    await expect(note.textContent()).resolves.toContain('“Samples” (asg_prod_');
    const message = page.locator('[data-code-samples]').nth(1);
    const curl = await sampleText(message, 'curl');
    expect(curl).toContain(`Authorization: Bearer ${secret}`);
    await expect(runSample('curl', curl)).resolves.toBe('202');
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);

    await note.getByRole('button', { name: 'Forget it' }).click();
    await expect(sampleText(message, 'curl')).resolves.toContain('$ASG_KEY');
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).sessionStorage.length)).toBe(0);
    expect(page.url()).not.toContain(secret);
    expect(console_.problems).toEqual([]);
  });

  test('when the developer logs out, then the key handed to the tab is gone: the landing page samples read ASG_KEY and the tab keeps nothing', async () => {
    const console_ = watchConsole(page);
    await signUpInBrowser(page, uniqueEmail('samples-logout'));
    const secret = await createKeyInBrowser(page, { name: 'Shared laptop' });
    await useInExplorer();
    await page.goto('/portal/');
    await page.locator('[data-tab-key-note]').waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL('**/portal/login?signedout=1');
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).sessionStorage.length)).toBe(0);
    await page.goto('/portal/');
    const list = page.locator('[data-code-samples]').first();
    await expect(sampleText(list, 'curl')).resolves.toContain('-H "Authorization: Bearer $ASG_KEY"');
    expect(await page.locator('[data-tab-key-note]').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(secret);
    expect(console_.problems).toEqual([]);
  });

  test('when the session lapses without a log out, then the login page forgets the key handed to the tab', async () => {
    const console_ = watchConsole(page);
    await signUpInBrowser(page, uniqueEmail('samples-lapsed'));
    await createKeyInBrowser(page, { name: 'Lapsing laptop' });
    await useInExplorer();
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).sessionStorage.length)).toBeGreaterThan(0);

    await context.clearCookies(); // the session ends on the server's side: no log out runs in the tab
    await page.goto('/portal/login');
    await page.locator('form[data-auth-form]').waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageWindow).sessionStorage.length)).toBe(0);
    expect(console_.problems).toEqual([]);
  });
});
