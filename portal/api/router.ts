import type { IncomingMessage } from 'node:http';
import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../lib/api-error';
import { describeExpressRequest, expressErrorReporter } from '../../lib/report-error';
import { wrongCredentials, type Account, type AccountService } from '../../identity/account-service';
import { keyNotFound, type ApiKeyService, type IssuedKey, type KeySummary, type RollOverlap } from '../../identity/api-key-service';
import type { DailyUsageService } from '../../identity/daily-usage-service';
import type { LoginLimiter } from '../../identity/login-limiter';
import type { AccountPlanUsage, PlanUsage } from '../../identity/plan-usage';
import type { SignupLimiter } from '../../identity/signup-limiter';
import { SESSION_COOKIE_NAME, sessionCookieOptions, sessionEnded, type SessionService } from '../../identity/session-service';
import { serializeCookie } from './cookies';
import { loggedRequestBody, readKeyRequestsQuery, type KeyRequestLog } from './key-requests';
import { nextPageLink } from '../../lib/next-page-link';
import { jsonBody, optionalNumberOrNull, optionalString, readFields, requiredString } from './json-body';
import { onlyMethods } from './only-methods';
import { sameOriginOnly } from './same-origin';
import { currentSession, requireSession, sessionToken } from './session-auth';
import { usageRoutes } from './usage-routes';
import { isoOrNull } from '../../lib/iso-date';

export interface PortalApiDeps {
  accounts: AccountService;
  sessions: SessionService;
  apiKeys: Pick<ApiKeyService, 'issue' | 'list' | 'revoke' | 'roll'>;
  /** Requests per key and day by outcome: the usage chart's data. */
  dailyUsage: Pick<DailyUsageService, 'forKey' | 'forAccount'>;
  /** The account's plan and this month's usage. */
  planUsage: PlanUsage;
  loginLimiter: LoginLimiter;
  signupLimiter: SignupLimiter;
  /** Each key's recent requests, shown to its owner only; without it, `/keys/{id}/requests` is not served. */
  requestLog?: KeyRequestLog;
  /** What the limiters count a client by: the gateway's one function for it (the socket or the trusted proxy's entry, IPv6 by its /64). */
  clientKey: (req: IncomingMessage) => string;
  /** The portal's public base URL: its origin is allowed for state-changing requests; https → `Secure` cookie. */
  publicUrl: string;
  clock?: () => Date;
  /** Receives 5xx errors (with their cause). Request bodies are never passed to it. */
  logger?: { error(obj: object, msg?: string): void };
}

export const PORTAL_API_BODY_LIMIT_BYTES = 16 * 1024;

const accountBody = (account: Account) => ({ id: account.id, email: account.email, createdAt: account.createdAt.toISOString() });

const planBody = (usage: AccountPlanUsage) => ({
  plan: usage.plan,
  requestsPerMinute: usage.requestsPerMinute,
  requestsPerMonth: usage.requestsPerMonth,
  month: usage.month,
  requestsThisMonth: usage.requestsThisMonth,
  monthEndsAt: usage.monthEndsAt.toISOString(),
});

const keyBody = (key: KeySummary) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  environment: key.environment,
  status: key.status,
  expiresSoon: key.expiresSoon,
  rolledTo: key.rolledTo,
  rolledFrom: key.rolledFrom,
  createdAt: key.createdAt.toISOString(),
  expiresAt: isoOrNull(key.expiresAt),
  lastUsedAt: isoOrNull(key.lastUsedAt),
  revokedAt: isoOrNull(key.revokedAt),
  usage: {
    requests: key.usage.requests,
    deprecatedCalls: key.usage.deprecatedCalls,
    lastDeprecatedCallAt: isoOrNull(key.usage.lastDeprecatedCallAt),
  },
});

const issuedKeyBody = (key: IssuedKey) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  environment: key.environment,
  createdAt: key.createdAt.toISOString(),
  expiresAt: isoOrNull(key.expiresAt),
  key: key.key,
});

/**
 * The portal JSON API, mounted at `/portal/api`. Cookie sessions; JSON bodies of at most 16 KiB;
 * state-changing requests only from the portal's own origin; every error an Error body.
 */
export function createPortalApiRouter(deps: PortalApiDeps): Router {
  const { accounts, sessions, apiKeys, loginLimiter, signupLimiter, clientKey } = deps;
  const clock = deps.clock ?? (() => new Date());
  const cookieOptions = sessionCookieOptions(deps.publicUrl);
  const json = jsonBody({ limitBytes: PORTAL_API_BODY_LIMIT_BYTES });
  const signedIn = requireSession(sessions);

  const setSessionCookie = (res: Response, token: string, expiresAt: Date) => {
    const maxAgeSeconds = Math.round((expiresAt.getTime() - clock().getTime()) / 1000);
    res.append('Set-Cookie', serializeCookie(SESSION_COOKIE_NAME, token, { ...cookieOptions, expires: expiresAt, maxAgeSeconds }));
  };
  const clearSessionCookie = (res: Response) => {
    res.append('Set-Cookie', serializeCookie(SESSION_COOKIE_NAME, '', { ...cookieOptions, expires: new Date(0), maxAgeSeconds: 0 }));
  };
  /** A new session for every sign-in; the one the browser held before (if any) ends. */
  const startSession = async (req: Request, res: Response, accountId: number) => {
    const previous = sessionToken(req);
    if (previous) await sessions.end(previous);
    const session = await sessions.start(accountId);
    setSessionCookie(res, session.token, session.expiresAt);
  };

  const router = Router({ caseSensitive: true, strict: false });

  router.use(function noStore(_req, res, next) {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.use(sameOriginOnly({ publicUrl: deps.publicUrl }));

  router
    .route('/signup')
    .post(json, async function signup(req, res) {
      const fields = readFields(req.body, ['email', 'password']);
      const attempt = await signupLimiter.admit(clientKey(req));
      let account: Account;
      try {
        account = await accounts.signup(requiredString(fields, 'email'), requiredString(fields, 'password'));
      } finally {
        attempt.finished();
      }
      await startSession(req, res, account.id);
      res.status(201).json(accountBody(account));
    })
    .all(onlyMethods('POST'));

  router
    .route('/login')
    .post(json, async function login(req, res) {
      const fields = readFields(req.body, ['email', 'password']);
      const email = requiredString(fields, 'email');
      const password = requiredString(fields, 'password');
      const attempt = await loginLimiter.begin(email, clientKey(req));
      let account: Account | null;
      try {
        account = await accounts.authenticate(email, password);
      } catch (err) {
        await attempt.cancel().catch(() => {});
        throw err;
      }
      if (!account) {
        await attempt.failed();
        throw wrongCredentials();
      }
      await attempt.succeeded();
      await startSession(req, res, account.id);
      res.status(200).json(accountBody(account));
    })
    .all(onlyMethods('POST'));

  router
    .route('/logout')
    .post(async function logout(req, res) {
      const token = sessionToken(req);
      if (token) await sessions.end(token);
      clearSessionCookie(res);
      res.status(204).end();
    })
    .all(onlyMethods('POST'));

  router
    .route('/me')
    .get(signedIn, async function me(_req, res) {
      const account = await accounts.get(currentSession(res).accountId);
      if (!account) throw sessionEnded();
      res.status(200).json(accountBody(account));
    })
    .all(onlyMethods('GET'));

  router
    .route('/plan')
    .get(signedIn, async function plan(_req, res) {
      const usage = await deps.planUsage.of(currentSession(res).accountId);
      if (!usage) throw sessionEnded();
      res.status(200).json(planBody(usage));
    })
    .all(onlyMethods('GET'));

  router
    .route('/keys')
    .get(signedIn, async function listKeys(_req, res) {
      const keys = await apiKeys.list(currentSession(res).accountId);
      res.status(200).json(keys.map(keyBody));
    })
    .post(signedIn, json, async function createKey(req, res) {
      const fields = readFields(req.body, ['name', 'environment', 'expiresInDays']);
      const issued = await apiKeys.issue(currentSession(res).accountId, {
        name: requiredString(fields, 'name'),
        environment: optionalString(fields, 'environment'),
        expiresInDays: optionalNumberOrNull(fields, 'expiresInDays'),
      });
      res.status(201).json(issuedKeyBody(issued));
    })
    .all(onlyMethods('GET', 'POST'));

  router
    .route('/keys/:id')
    .delete(signedIn, async function revokeKey(req, res) {
      await apiKeys.revoke(currentSession(res).accountId, String(req.params.id));
      res.status(204).end();
    })
    .all(onlyMethods('DELETE'));

  router
    .route('/keys/:id/roll')
    .post(signedIn, json, async function rollKey(req, res) {
      const fields = readFields(req.body, ['overlap']);
      const issued = await apiKeys.roll(currentSession(res).accountId, String(req.params.id), requiredString(fields, 'overlap') as RollOverlap);
      res.status(201).json(issuedKeyBody(issued));
    })
    .all(onlyMethods('POST'));

  usageRoutes(router, { dailyUsage: deps.dailyUsage, signedIn });
  const { requestLog } = deps;
  if (requestLog) {
    router
      .route('/keys/:id/requests')
      .get(signedIn, async function listKeyRequests(req, res) {
        const query = readKeyRequestsQuery(req.originalUrl);
        const keyId = String(req.params.id);
        // Another account's key and a key that does not exist look the same: 404.
        if (!(await requestLog.ownsKey(currentSession(res).accountId, keyId))) throw keyNotFound();
        const page = await requestLog.read(keyId, query);
        if (page.next) {
          // limit among the filters so that it leads the query, as the portal has always sent it.
          const filters = { limit: query.limit, status: query.status, requestId: query.requestId };
          res.setHeader('Link', nextPageLink(`${deps.publicUrl}/portal/api/keys/${keyId}/requests`, filters, query.limit, page.next));
        }
        res.status(200).json(page.requests.map(loggedRequestBody));
      })
      .all(onlyMethods('GET'));
  }

  router.use(function unknownRoute(req) {
    throw new ApiError('not_found', `No portal API operation at ${req.method} ${req.baseUrl}${req.path}.`);
  });

  router.use(expressErrorReporter({ logger: deps.logger, message: 'portal API request failed', describe: describeExpressRequest, echoRequestId: true }));

  return router;
}
