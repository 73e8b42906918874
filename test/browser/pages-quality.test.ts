import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from '../support/gateway-harness';
import { axeViolations, seriousOrCritical } from './support/axe';
import { DESKTOP, horizontalOverflow, isFocused, launchChromium, newContext, PHONE, screenshot, signedInContext, watchConsole, watchOrigins } from './support/browser';
import type { PageWindow } from './support/page-globals';

/** One page load, then the states of that page worth checking, each scanned and photographed. */
interface PageJourney {
  path: string;
  signedIn?: boolean;
  states: Array<{
    /** Screenshot name; also names the state in failures. */
    name: string;
    /** Brings the page into this state (waits for what it renders). */
    act?: (page: Page) => Promise<void>;
    /** Console lines this state causes on purpose. */
    expectedConsole?: RegExp;
    /** A state that only checks (a dialog over a page already photographed). */
    noScreenshot?: boolean;
    /** Scan only what this state changed (the rest of the page was scanned in an earlier state). */
    scan?: string;
  }>;
}

const swaggerReady = async (page: Page) => {
  await page.locator('.opblock').first().waitFor();
};
const keysListed = async (page: Page) => {
  await page.getByRole('row', { name: /staging key/ }).waitFor();
};

const WIDTHS = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const;

const JOURNEYS: PageJourney[] = [
  { path: '/portal/', states: [{ name: 'landing' }] },
  {
    path: '/portal/signup',
    states: [
      { name: 'signup' },
      {
        name: 'signup-errors',
        act: async (page) => {
          await page.getByLabel('Email address').fill('not-an-email');
          await page.getByRole('button', { name: 'Create account' }).click();
          await page.getByText('Enter an email address like name@example.com.').waitFor();
        },
      },
    ],
  },
  { path: '/portal/login', states: [{ name: 'login' }] },
  {
    path: '/portal/keys',
    signedIn: true,
    states: [
      { name: 'keys', act: keysListed },
      {
        name: 'keys-new-key',
        scan: 'main',
        act: async (page) => {
          await page.getByLabel('Name', { exact: true }).fill('Laptop');
          await page.getByRole('button', { name: 'Create key' }).click();
          await page.getByLabel(/^API key/).waitFor();
          await page.getByRole('row', { name: /Laptop/ }).first().waitFor();
        },
      },
      {
        name: 'keys-revoke-dialog',
        noScreenshot: true,
        scan: '#revoke-dialog',
        act: async (page) => {
          await page.getByRole('row', { name: /staging key/ }).getByRole('button', { name: /Revoke/ }).click();
          await page.getByRole('dialog', { name: /Revoke/ }).waitFor();
        },
      },
    ],
  },
  { path: '/portal/deprecations', states: [{ name: 'deprecations' }] },
  {
    path: '/docs/',
    states: [
      { name: 'docs', act: swaggerReady },
      {
        name: 'docs-authorize-dialog',
        noScreenshot: true,
        scan: '.dialog-ux',
        act: async (page) => {
          await page.getByRole('button', { name: 'Authorize' }).first().click();
          await page.getByRole('dialog', { name: 'Available authorizations' }).waitFor();
        },
      },
      {
        name: 'docs-try-it-out',
        scan: '#operations-Pets-listPets',
        act: async (page) => {
          await page.keyboard.press('Escape');
          const op = page.locator('#operations-Pets-listPets');
          await op.locator('.opblock-summary-control').click();
          await op.getByRole('button', { name: 'Execute' }).click();
          await op.locator('.live-responses-table tbody .response-col_status').waitFor();
        },
        // Without a key the call answers 401: the page working, which Chromium logs as a failed load.
        expectedConsole: /status of 401/,
      },
      {
        name: 'docs-post-body',
        noScreenshot: true,
        scan: '#operations-Messages-createMessage',
        act: async (page) => {
          await page.locator('#operations-Pets-listPets .opblock-summary-control').click();
          const op = page.locator('#operations-Messages-createMessage');
          await op.locator('.opblock-summary-control').click();
          await op.locator('textarea').waitFor();
        },
      },
    ],
  },
  { path: '/docs/portal/', states: [{ name: 'docs-portal', act: swaggerReady }] },
];

/**
 * Every page at desktop and phone width: no console errors, no request off the gateway, no
 * serious or critical axe-core violation (WCAG 2.1 A/AA), no sideways scrolling on a phone.
 * Screenshots go to test-results/screenshots/.
 */
describe('every portal and docs page (real Chromium)', () => {
  let gw: TestGateway;
  let browser: Browser;
  let developer: Developer;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
    developer = await signUpDeveloper(gw.url);
    const revoked = await developer.issueKey({ name: 'old laptop', expiresInDays: 30 });
    await developer.revoke(revoked.id);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function contextFor(c: { signedIn?: boolean }, viewport: { width: number; height: number }): Promise<BrowserContext> {
    return c.signedIn ? signedInContext(browser, gw.url, developer.cookie, viewport) : newContext(browser, gw.url, viewport);
  }

  // One test per page and width: the docs page's four scans at both widths passed a test's
  // minute once, with the rest of the suite sharing CI's two cores.
  for (const journey of JOURNEYS) {
    const names = journey.states.map((state) => state.name).join(', ');
    for (const [label, viewport] of WIDTHS) {
      test(`when ${journey.path} (${names}) is used at ${label} width, then it is accessible, error-free and fits`, async () => {
        const context = await contextFor(journey, viewport);
        try {
          const page = await context.newPage();
          const console_ = watchConsole(page);
          const outside = watchOrigins(page, gw.url);
          const response = await page.goto(journey.path);
          expect(response?.status()).toBe(200);
          for (const state of journey.states) {
            const where = { state: state.name, viewport: label };
            await state.act?.(page);
            await page.evaluate(() => (globalThis as unknown as PageWindow).document.fonts.ready);
            if (!state.noScreenshot) await screenshot(page, `${state.name}-${label}`);
            const violations = seriousOrCritical(await axeViolations(page, { include: state.scan }));
            expect({ ...where, violations }).toEqual({ ...where, violations: [] });
            expect({ ...where, overflow: await horizontalOverflow(page) }).toEqual({ ...where, overflow: 0 });
            const problems = console_.problems.filter((p) => !state.expectedConsole?.test(p));
            expect({ ...where, problems }).toEqual({ ...where, problems: [] });
            console_.clear();
          }
          expect(outside).toEqual([]);
        } finally {
          await context.close();
        }
      });
    }
  }

  test('when a keyboard user tabs into a page, then the skip link comes first, is visible, and every control shows focus', async () => {
    const context = await contextFor({}, DESKTOP);
    try {
      const page = await context.newPage();
      await page.goto('/portal/login');
      await page.keyboard.press('Tab');
      const skip = page.getByRole('link', { name: 'Skip to main content' });
      await expect(isFocused(skip)).resolves.toBe(true);
      const box = await skip.boundingBox();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      // From the main content, the first stop is the first form field, with a visible focus outline.
      const focused = await page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as unknown as PageWindow;
        const style = getComputedStyle(document.activeElement);
        return { id: document.activeElement?.id, outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
      });
      expect(focused).toEqual({ id: 'email', outline: 'solid', width: 3 });
    } finally {
      await context.close();
    }
  });
});
