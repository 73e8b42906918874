import type { AccountAdmin } from '../../identity/account-admin';
import type { AuditContext, AuditLog } from '../../identity/audit-log';
import type { KeyAdmin } from '../../identity/key-admin';
import type { PlanService } from '../../identity/plans';
import { accountDetailBody, accountSummaryBody, adminKeyBody, auditEntryBody, planBody, secretReportBody } from './admin-views';
import { nextPageLink } from '../../lib/next-page-link';

/** One admin operation's input, already matched and validated against openapi/admin.yaml. */
export interface AdminCall {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** The parsed body (validated by the document), or undefined when an optional body was not sent. */
  body: unknown;
  /** Who asked (`admin:<label>`) and the request's id, for the audit trail. */
  audit: AuditContext;
}

export interface AdminReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type AdminHandler = (call: AdminCall) => Promise<AdminReply>;

export interface AdminServices {
  accounts: AccountAdmin;
  keys: KeyAdmin;
  plans: Pick<PlanService, 'list' | 'put'>;
  audit: Pick<AuditLog, 'list'>;
  /** Where the keys' recent requests are kept, outside PostgreSQL: an erasure deletes them too. */
  requestLog: { forget(keyIds: readonly string[]): Promise<void> };
}

type Fields = Record<string, unknown>;

/** The document has checked the reason's shape (1–500 characters on one line); it is stored trimmed. */
const reasonOf = (body: unknown): string | null => {
  const reason = (body as Fields | undefined)?.reason;
  return typeof reason === 'string' ? reason.trim() : null;
};

/**
 * A page as the document's lists are: a JSON array, and `Link: rel="next"` when there is more. The
 * link is a query alone, resolved against the request's URL: it keeps the origin and any path
 * prefix the client reached the listener under, which its bind address may not be.
 */
function page<T>(items: T[], next: string | number | null, call: AdminCall, filters: Record<string, string | number | undefined>): AdminReply {
  const limit = call.query.limit as number;
  return { status: 200, body: items, headers: next === null ? undefined : { Link: nextPageLink('', filters, limit, next) } };
}

/** Each operationId of openapi/admin.yaml and what it does: adapt the call, ask a service, shape the answer. */
export function createAdminHandlers({ accounts, keys, plans, audit, requestLog }: AdminServices): Record<string, AdminHandler> {
  return {
    async listAccounts(call) {
      const { email, limit, after } = call.query as { email?: string; limit: number; after?: number };
      const found = await accounts.list({ email, limit, after });
      return page(found.accounts.map(accountSummaryBody), found.next, call, { email });
    },

    async getAccount({ params }) {
      return { status: 200, body: accountDetailBody(await accounts.get(params.id as number)) };
    },

    async deleteAccount({ params, body, audit: context }) {
      const { keyIds } = await accounts.erase(params.id as number, reasonOf(body), context);
      await requestLog.forget(keyIds);
      return { status: 204 };
    },

    async suspendAccount({ params, body, audit: context }) {
      return { status: 200, body: accountSummaryBody(await accounts.suspend(params.id as number, reasonOf(body)!, context)) };
    },

    async reinstateAccount({ params, body, audit: context }) {
      return { status: 200, body: accountSummaryBody(await accounts.reinstate(params.id as number, reasonOf(body), context)) };
    },

    async setAccountPlan({ params, body, audit: context }) {
      return { status: 200, body: accountSummaryBody(await accounts.setPlan(params.id as number, (body as Fields).plan as string, context)) };
    },

    async listKeys(call) {
      const { prefix, limit, after } = call.query as { prefix: string; limit: number; after?: string };
      const found = await keys.findByPrefix(prefix, { limit, after });
      return page(found.keys.map(adminKeyBody), found.next, call, { prefix });
    },

    async revokeKey({ params, body, audit: context }) {
      return { status: 200, body: adminKeyBody(await keys.revoke(params.id as string, reasonOf(body)!, context)) };
    },

    async revokeKeyBySecret({ body, audit: context }) {
      return { status: 200, body: secretReportBody(await keys.revokeBySecret((body as Fields).key as string, context)) };
    },

    async listPlans() {
      const all = plans.list().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { status: 200, body: all.map(planBody) };
    },

    async putPlan({ params, body, audit: context }) {
      const { requestsPerMinute, requestsPerMonth } = body as { requestsPerMinute: number; requestsPerMonth: number | null };
      const { plan, created } = await plans.put(params.name as string, { requestsPerMinute, requestsPerMonth }, context);
      return { status: created ? 201 : 200, body: planBody(plan) };
    },

    async listAuditEntries(call) {
      const { accountId, limit, after } = call.query as { accountId?: number; limit: number; after?: number };
      const found = await audit.list({ limit, after, accountId });
      return page(found.entries.map(auditEntryBody), found.next, call, { accountId });
    },
  };
}
