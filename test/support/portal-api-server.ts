import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Database } from '../../db/database';
import { clientKey } from '../../gateway/http/client-ip';
import { createAccountService } from '../../identity/account-service';
import { createDailyUsageService } from '../../identity/daily-usage-service';
import { createLoginLimiter } from '../../identity/login-limiter';
import { createSessionService } from '../../identity/session-service';
import { createSignupLimiter } from '../../identity/signup-limiter';
import { createPortalApiRouter, type PortalApiDeps } from '../../portal/api/router';

/** The public URL the router is told it serves: its origin passes the same-origin check. */
export const PORTAL_PUBLIC_URL = 'https://portal.example.com';

export interface PortalApiServer {
  /** The origin the server listens at, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  /** `${origin}/portal/api`. */
  base: string;
  stop(): Promise<void>;
}

/**
 * The portal API router alone on a free loopback port, with the real account, session and
 * daily-usage services on `db` and fresh limiters; `deps` gives the rest and replaces any default.
 */
export async function startPortalApi(db: Database, deps: Pick<PortalApiDeps, 'apiKeys' | 'planUsage'> & Partial<PortalApiDeps>): Promise<PortalApiServer> {
  const app = express();
  app.use(
    '/portal/api',
    createPortalApiRouter({
      accounts: createAccountService({ db }),
      sessions: createSessionService({ db, secret: 'portal-api-test-session-secret-0123456789' }),
      dailyUsage: createDailyUsageService({ db, nowMs: Date.now }),
      loginLimiter: createLoginLimiter(),
      signupLimiter: createSignupLimiter(),
      clientKey: (req) => clientKey(req, false),
      publicUrl: PORTAL_PUBLIC_URL,
      ...deps,
    }),
  );
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    base: `${origin}/portal/api`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
