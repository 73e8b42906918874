import type { Locator, Page } from 'playwright-core';

export const PASSWORD = 'correct horse battery staple';

let counter = 0;
export function uniqueEmail(tag: string): string {
  return `${tag}-${process.pid}-${Date.now()}-${counter++}@example.com`;
}

/** Counts the clicks a journey takes, as a person would make them. */
export class ClickCounter {
  count = 0;
  async click(target: Locator): Promise<void> {
    this.count++;
    await target.click();
  }
}

/** Fills and submits the sign-up form on the current page (/portal/signup). */
export async function submitSignup(page: Page, email: string, password = PASSWORD, clicks = new ClickCounter()): Promise<void> {
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await clicks.click(page.getByRole('button', { name: 'Create account' }));
}

export async function submitLogin(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** Signs up through the pages and lands on the keys page with its list loaded. */
export async function signUpInBrowser(page: Page, email: string): Promise<void> {
  await page.goto('/portal/signup');
  await submitSignup(page, email);
  await page.waitForURL('**/portal/keys');
  await page.locator('[data-list-status]').filter({ hasNotText: 'Loading' }).waitFor();
}

/** Creates a key on the keys page and returns the secret from the one-time panel. */
export async function createKeyInBrowser(page: Page, o: { name: string; environment?: 'Production' | 'Staging'; expires?: string }): Promise<string> {
  await page.getByLabel('Name', { exact: true }).fill(o.name);
  if (o.environment) await page.getByRole('radio', { name: new RegExp(o.environment) }).check();
  if (o.expires) await page.getByLabel(/Expires/).selectOption({ label: o.expires });
  await page.getByRole('button', { name: 'Create key' }).click();
  return newKeyShown(page);
}

/** The key just created, read once its panel shows it: the field is in the page from the start, empty and hidden. */
export async function newKeyShown(page: Page): Promise<string> {
  const secret = page.getByLabel(/^API key/);
  await secret.waitFor();
  return secret.inputValue();
}

/** The status code Swagger UI shows for the last Execute of an operation. */
export function executedStatus(page: Page, operationId: string, tag = 'Pets'): Locator {
  return page.locator(`#operations-${tag}-${operationId} .live-responses-table .response .response-col_status`).first();
}

/** What Swagger UI shows of the last response of an operation: body and headers. */
export function executedDetails(page: Page, operationId: string, tag = 'Pets'): Locator {
  return page.locator(`#operations-${tag}-${operationId} .live-responses-table tbody .response-col_description`).first();
}

/** Opens an operation (if closed) and presses Execute. Not for a page still opening a deep link: that races. */
export async function execute(page: Page, operationId: string, tag = 'Pets'): Promise<void> {
  const op = page.locator(`#operations-${tag}-${operationId}`);
  if (!(await op.locator('.opblock-body').count())) await op.locator('.opblock-summary-control').click();
  await op.getByRole('button', { name: 'Execute' }).click();
}
