import { join } from 'node:path';
import { Router, type Request, type Response } from 'express';
import type { AccountService } from '../identity/account-service';
import type { SessionService } from '../identity/session-service';
import type { EnvironmentPrefixes } from '../openapi/environments';
import type { OperationTable } from '../openapi/operations';
import { sessionToken } from './api/session-auth';
import { createAssets, type Assets } from './assets';
import { deprecationNotice } from './deprecation-notice';
import type { SafeHtml } from './html';
import { loginPage, safeNext, signupPage } from './pages/auth-pages';
import { deprecationsPage } from './pages/deprecations-page';
import { keysPage } from './pages/keys-page';
import { landingPage } from './pages/landing-page';
import { layout, type PageOptions, type Viewer } from './pages/layout';
import { usagePanel } from './pages/usage-panel';
import { loadUsageView, type UsageViewDeps } from './usage/usage-view';

export const PORTAL_ASSETS_PATH = '/portal/assets';

/** The portal's CSS, scripts and icons (portal/public), shared by the portal pages and the docs. */
export function createPortalAssets(): Assets {
  return createAssets({ dir: join(__dirname, 'public'), mountPath: PORTAL_ASSETS_PATH });
}

export interface PortalDeps {
  /** Base URL the portal shows in examples and environment tables (PUBLIC_URL). */
  publicUrl: string;
  sessions: Pick<SessionService, 'resolve'>;
  accounts: Pick<AccountService, 'get'>;
  assets: Assets;
  /** The public contract, compiled once: the pages' prefixes and deprecation dates come from it. */
  operations: OperationTable;
  prefixes: EnvironmentPrefixes;
  /** The keys page's usage chart: daily counts, and the keys to name the one shown. */
  usage: UsageViewDeps;
}

/** The operation the deprecations page's migration guide is written for. */
const GUIDED_DEPRECATION = 'getPet';

/**
 * The developer portal pages under `/portal/`, server-rendered, plus their static assets.
 * Pages read the session only to greet the account and guard the keys page; every change
 * (sign up, log in, keys) goes through the portal JSON API from the page scripts.
 */
export function createPortal(deps: PortalDeps): Router {
  const { assets, publicUrl, prefixes } = deps;
  const deprecated = deprecationNotice(deps.operations, GUIDED_DEPRECATION);
  const router = Router({ strict: true, caseSensitive: true });

  const signedInAccount = async (req: Request) => {
    const token = sessionToken(req);
    const session = token ? await deps.sessions.resolve(token) : null;
    return session ? deps.accounts.get(session.accountId) : null;
  };
  const viewerOf = async (req: Request): Promise<Viewer> => {
    const account = await signedInAccount(req);
    return account ? { email: account.email } : 'anonymous';
  };

  const send = (res: Response, page: Omit<PageOptions, 'assets'>, cacheControl = 'private, no-cache') => {
    res.status(200).type('html').set('Cache-Control', cacheControl).send(layout({ ...page, assets }).value);
  };
  const redirect = (res: Response, location: string) => {
    res.set('Cache-Control', 'no-store').redirect(303, location);
  };
  const page = (title: string, description: string, section: PageOptions['section'], viewer: Viewer, main: SafeHtml, scripts: string[] = []) => ({
    title,
    description,
    section,
    viewer,
    main,
    scripts: scripts.map((s) => assets.url(s)),
  });

  router.use(assets.handler);

  // Someone who opens the gateway's address in a browser is looking for the portal. 302, not 301:
  // browsers keep a 301 for good, and the root may serve something else one day.
  router.get('/', function siteRoot(_req, res) {
    res.redirect(302, '/portal/');
  });

  router.get('/portal', function portalRoot(_req, res) {
    res.redirect(301, '/portal/');
  });

  router.get('/portal/', async function landing(req, res) {
    const viewer = await viewerOf(req);
    send(res, page('Animal Store API', 'Get an API key and make your first Animal Store API call in under a minute.', 'home', viewer, landingPage({ publicUrl, viewer, prefixes, deprecated }), ['code-samples.js']));
  });

  router.get('/portal/signup', async function signup(req, res) {
    const next = safeNext(req.query.next);
    if (typeof (await viewerOf(req)) === 'object') return redirect(res, next);
    send(res, page('Sign up', 'Create an Animal Store developer account.', 'signup', 'anonymous', signupPage({ next }), ['auth.js']));
  });

  router.get('/portal/login', async function login(req, res) {
    const next = safeNext(req.query.next);
    if (typeof (await viewerOf(req)) === 'object') return redirect(res, next);
    const main = loginPage({ next, signedOut: req.query.signedout === '1' });
    send(res, page('Log in', 'Log in to the Animal Store developer portal.', 'login', 'anonymous', main, ['auth.js']));
  });

  router.get('/portal/keys', async function keys(req, res) {
    const account = await signedInAccount(req);
    if (!account) return redirect(res, '/portal/login?next=%2Fportal%2Fkeys');
    const usage = usagePanel(await loadUsageView(deps.usage, account.id, req.query.usage));
    const main = keysPage({ email: account.email, publicUrl, prefixes, deprecated, usage });
    const keysView = page('API keys', 'Create, list and revoke your Animal Store API keys, and see their usage.', 'keys', { email: account.email }, main, ['plan-usage.js', 'keys.js', 'usage-chart.js', 'key-requests.js']);
    send(res, { ...keysView, styles: [assets.url('usage.css')] }, 'no-store');
  });

  router.get('/portal/deprecations', async function deprecations(req, res) {
    const viewer = await viewerOf(req);
    const main = deprecationsPage({ publicUrl, prefixes, deprecated });
    send(res, page('Deprecations', 'Deprecated Animal Store API operations, their sunset dates and how to migrate.', 'deprecations', viewer, main));
  });

  return router;
}
