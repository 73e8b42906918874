import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { explainFailedNavigations } from './navigation-diagnosis';
import type { PageWindow } from './page-globals';

/** Debian's Chromium; `npx playwright install` cannot download a browser here. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export const SCREENSHOT_DIR = join(__dirname, '..', '..', '..', 'test-results', 'screenshots');

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Browser tests need Chromium at ${CHROMIUM_PATH}: install Debian's "chromium" package (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** How a context's pages run: with JavaScript (the default) or without, as a browser with it turned off. */
export interface ContextOptions {
  javaScriptEnabled?: boolean;
}

/** A fresh context (its own cookies and storage) that may use the clipboard on `origin`. */
export async function newContext(browser: Browser, origin: string, viewport: { width: number; height: number } = DESKTOP, options: ContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, baseURL: origin, locale: 'en-GB', timezoneId: 'UTC', ...options });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  // Well under Jest's 30 s, so a stuck step fails with Playwright's message, naming what it waited for.
  context.setDefaultTimeout(10_000);
  explainFailedNavigations(context, origin);
  return context;
}

/** A fresh context (see newContext) signed in as the developer whose session cookie is `cookie` ("name=value"). */
export async function signedInContext(
  browser: Browser,
  origin: string,
  cookie: string,
  viewport: { width: number; height: number } = DESKTOP,
  options: ContextOptions = {},
): Promise<BrowserContext> {
  const context = await newContext(browser, origin, viewport, options);
  const [name, value] = cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: `${origin}/portal/`, httpOnly: true, sameSite: 'Lax' }]);
  return context;
}

export interface ConsoleWatch {
  /** Console errors, warnings about CSP, failed loads and uncaught exceptions seen so far. */
  readonly problems: string[];
  /** Forgets what was seen so far (e.g. an error the test provoked on purpose). */
  clear(): void;
}

/**
 * Collects everything a developer would see in red in the browser console: console.error,
 * uncaught exceptions, and the messages Chromium logs itself (failed loads, CSP refusals),
 * which Playwright forwards as console messages too.
 */
export function watchConsole(page: Page): ConsoleWatch {
  const problems: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() === 'error' || /Content Security Policy|Refused to/i.test(text)) {
      problems.push(`console.${message.type()}: ${text} (${message.location().url})`);
    }
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('requestfailed', (request) => {
    const failure = request.failure()?.errorText ?? '';
    // A navigation away cancels in-flight loads; that is not an error.
    if (failure !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()} ${failure}`);
  });
  return {
    problems,
    clear: () => {
      problems.length = 0;
    },
  };
}

/** Every request the page makes must stay on `origin`: no CDN, no outside validator. */
export function watchOrigins(page: Page, origin: string): string[] {
  const outside: string[] = [];
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:')) outside.push(url);
  });
  return outside;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true, animations: 'disabled', caret: 'hide' });
  return path;
}

/** The page is usable at its width: nothing forces horizontal scrolling of the whole page. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const { documentElement } = (globalThis as unknown as PageWindow).document;
    return documentElement.scrollWidth - documentElement.clientWidth;
  });
}

export function isFocused(target: Locator): Promise<boolean> {
  return target.evaluate((el) => el === (globalThis as unknown as PageWindow).document.activeElement);
}

/** What the page keeps in Web Storage: entry counts and every entry as text (to search for secrets). */
export function webStorage(page: Page): Promise<{ local: number; session: number; text: string }> {
  return page.evaluate(() => {
    const { localStorage, sessionStorage } = globalThis as unknown as PageWindow;
    return { local: localStorage.length, session: sessionStorage.length, text: JSON.stringify([{ ...localStorage }, { ...sessionStorage }]) };
  });
}
