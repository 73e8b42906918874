import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { isFocused, launchChromium, newContext, watchConsole, type ConsoleWatch } from './support/browser';
import { PASSWORD, signUpInBrowser, submitLogin, submitSignup, uniqueEmail } from './support/portal-flows';

/** Sign-up, log-in and log-out pages: the errors a developer meets, said clearly, next to the right field. */
describe('sign-up and log-in forms (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let console_: ConsoleWatch;
  /** An account that exists before the tests, for those that only need one to be there. */
  const existing = uniqueEmail('existing');

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
    await signUpDeveloperWithEmail(existing);
  });

  beforeEach(async () => {
    context = await newContext(browser, gw.url);
    page = await context.newPage();
    console_ = watchConsole(page);
  });

  afterEach(async () => {
    await context?.close();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  /** Chromium logs every 4xx answer as a failed load; the one the test provoked is expected, nothing else. */
  const unexpectedProblems = (status: number) => console_.problems.filter((p) => !p.includes(`status of ${status}`));

  test('when the password is wrong, then the form says so, clears the password and stays on the page', async () => {
    const email = uniqueEmail('wrong');
    await signUpInBrowser(page, email);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL('**/portal/login?signedout=1');
    await page.getByText('You have been logged out.').waitFor();

    await submitLogin(page, email, 'not the right password');
    const alert = page.getByRole('alert').filter({ hasText: 'Email or password is incorrect' });
    await alert.waitFor();
    await expect(isFocused(alert)).resolves.toBe(true);
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(new URL(page.url()).pathname).toBe('/portal/login');
    expect(unexpectedProblems(401)).toEqual([]);

    await submitLogin(page, email, PASSWORD);
    await page.waitForURL('**/portal/keys');
  });

  test('when fields are empty or malformed, then each field names its problem before anything is sent', async () => {
    let requests = 0;
    page.on('request', (r) => void (r.url().includes('/portal/api/') && requests++));
    await page.goto('/portal/signup');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Enter your email address.').waitFor();
    await page.getByText('Choose a password.').waitFor();
    await expect(page.getByLabel('Email address').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(isFocused(page.getByLabel('Email address'))).resolves.toBe(true);
    // The error is the field's description, so a screen reader reads it with the label.
    await expect(page.getByLabel('Email address').getAttribute('aria-describedby')).resolves.toContain('email-error');

    await page.getByLabel('Email address').fill('not-an-email');
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Enter an email address like name@example.com.').waitFor();
    await page.getByText('Password must be at least 10 characters long.').waitFor();
    expect(requests).toBe(0);
    expect(console_.problems).toEqual([]);
  });

  test('when the password is too common, then the password field shows the server policy message', async () => {
    await page.goto('/portal/signup');
    await submitSignup(page, uniqueEmail('weak'), 'password123');
    const error = page.locator('#password-error');
    await error.filter({ hasText: /too common|easy to guess/ }).waitFor();
    await expect(page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    expect(unexpectedProblems(400)).toEqual([]);
  });

  test('when the email is taken, then sign-up says so and offers to log in instead', async () => {
    await page.goto('/portal/signup');
    await submitSignup(page, existing.toUpperCase());
    await page.locator('#email-error').filter({ hasText: 'An account with this email already exists.' }).waitFor();
    const alert = page.getByRole('alert').filter({ hasText: 'already exists' });
    await alert.getByRole('link', { name: 'Log in instead' }).click();
    await page.waitForURL('**/portal/login');
    expect(unexpectedProblems(409)).toEqual([]);
  });

  test('when a password is guessed wrong five times, then the sixth attempt is locked out with the wait time', async () => {
    const email = uniqueEmail('locked');
    await signUpDeveloperWithEmail(email);
    await page.goto('/portal/login');
    for (let i = 0; i < 5; i++) {
      await submitLogin(page, email, `wrong password ${i}`);
      await page.getByRole('alert').filter({ hasText: 'Email or password is incorrect' }).waitFor();
      await page.getByRole('button', { name: 'Log in' }).and(page.locator(':enabled')).waitFor();
    }
    await submitLogin(page, email, PASSWORD);
    await page.getByRole('alert').filter({ hasText: /Too many failed sign-in attempts .* Try again in 15 minutes\./ }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/portal/login');
    expect(console_.problems.filter((p) => !/status of (401|429)/.test(p))).toEqual([]);
  });

  test('when a signed-out visitor opens the keys page, then log-in brings them back to it; log out ends the session', async () => {
    const email = existing;
    await page.goto('/portal/keys');
    await page.waitForURL('**/portal/login?next=%2Fportal%2Fkeys');
    await submitLogin(page, email, PASSWORD);
    await page.waitForURL('**/portal/keys');
    await expect(page.getByRole('navigation', { name: 'Main' }).textContent()).resolves.toContain(email);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL('**/portal/login?signedout=1');
    await page.goto('/portal/keys');
    await page.waitForURL('**/portal/login?next=%2Fportal%2Fkeys');
    expect(console_.problems).toEqual([]);
  });

  test('when the next address points elsewhere, then log-in ignores it and goes to the keys page', async () => {
    await page.goto('/portal/login?next=' + encodeURIComponent('//evil.example/phish'));
    await submitLogin(page, existing, PASSWORD);
    await page.waitForURL('**/portal/keys');
  });

  async function signUpDeveloperWithEmail(email: string): Promise<void> {
    const res = await fetch(`${gw.url}/portal/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(res.status).toBe(201);
  }
});
