import type { AccountDetail, AccountOverview } from '../../identity/account-admin';
import type { AdminKeyView } from '../../identity/admin-key-view';
import type { AuditEntry } from '../../identity/audit-log';
import type { SecretReport } from '../../identity/key-admin';
import type { Plan } from '../../identity/plans';
import { isoOrNull } from '../../lib/iso-date';

/**
 * The admin document's schemas as JSON, field by field: a field added to a service's result
 * reaches operators only when it is added here and to openapi/admin.yaml.
 */

export const accountSummaryBody = (a: AccountOverview) => ({
  id: a.id,
  email: a.email,
  createdAt: a.createdAt.toISOString(),
  status: a.status,
  suspendedAt: isoOrNull(a.suspendedAt),
  suspensionReason: a.suspensionReason,
  plan: a.plan,
  keyCount: a.keyCount,
  requestsThisMonth: a.requestsThisMonth,
});

export const adminKeyBody = (k: AdminKeyView) => ({
  id: k.id,
  accountId: k.accountId,
  name: k.name,
  prefix: k.prefix,
  environment: k.environment,
  status: k.status,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: isoOrNull(k.lastUsedAt),
  expiresAt: isoOrNull(k.expiresAt),
  revokedAt: isoOrNull(k.revokedAt),
  revocationReason: k.revocationReason,
  usage: { requests: k.usage.requests, deprecatedCalls: k.usage.deprecatedCalls },
});

export const accountDetailBody = (a: AccountDetail) => ({ ...accountSummaryBody(a), keys: a.keys.map(adminKeyBody) });

export const secretReportBody = (r: SecretReport) => ({
  key: adminKeyBody(r.key),
  owner: { id: r.owner.id, email: r.owner.email },
  alreadyRevoked: r.alreadyRevoked,
});

export const planBody = (p: Plan) => ({
  name: p.name,
  requestsPerMinute: p.requestsPerMinute,
  requestsPerMonth: p.requestsPerMonth,
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});

export const auditEntryBody = (e: AuditEntry) => ({
  id: e.id,
  at: e.at.toISOString(),
  actor: e.actor,
  action: e.action,
  targetType: e.targetType,
  targetId: e.targetId,
  accountId: e.accountId,
  reason: e.reason,
  requestId: e.requestId,
  details: e.details,
});
