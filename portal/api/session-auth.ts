import type { Request, RequestHandler, Response } from 'express';
import { SESSION_COOKIE_NAME, sessionEnded, type Session, type SessionService } from '../../identity/session-service';
import { parseCookies } from './cookies';

/** The session token the request carries, if any. */
export function sessionToken(req: Request): string | undefined {
  return parseCookies(req.headers.cookie).get(SESSION_COOKIE_NAME) || undefined;
}

/** The session `requireSession` resolved for this request. */
export function currentSession(res: Response): Session {
  const session = res.locals.session as Session | undefined;
  if (!session) throw new Error('currentSession used on a route without requireSession');
  return session;
}

/** 401 `unauthorized` unless the request carries a live session; leaves it in `res.locals.session`. */
export function requireSession(sessions: Pick<SessionService, 'resolve'>): RequestHandler {
  return async function requireSession(req, res, next) {
    const token = sessionToken(req);
    const session = token ? await sessions.resolve(token) : null;
    if (!session) throw sessionEnded();
    res.locals.session = session;
    next();
  };
}
