import type { Response } from 'express';
import type { Actor } from '../../identity/audit-log';

/** What the admin listener knows of a request as it goes: its id, who was let in, the operation matched. */
export interface AdminRequestState {
  requestId: string;
  actor?: Actor;
  /** The document's operationId and path template: what the log line names instead of the raw path, which may hold a pasted secret. */
  operation?: { operationId: string; pathTemplate: string };
}

/** The request's state, kept in `res.locals` (Express's per-request place), created by the first middleware. */
export function adminState(res: Response): AdminRequestState {
  return res.locals as AdminRequestState;
}
