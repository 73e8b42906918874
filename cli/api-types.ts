/** The admin API's resources as openapi/admin.yaml describes them (dates are ISO 8601 strings). */

export interface AccountSummary {
  id: number;
  email: string;
  createdAt: string;
  status: 'active' | 'suspended';
  suspendedAt: string | null;
  suspensionReason: string | null;
  plan: string;
  keyCount: number;
  requestsThisMonth: number;
}

export interface AdminKey {
  id: string;
  accountId: number;
  name: string;
  prefix: string;
  environment: string;
  status: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  revocationReason: string | null;
  usage: { requests: number; deprecatedCalls: number };
}

export interface AccountDetail extends AccountSummary {
  keys: AdminKey[];
}

export interface SecretReport {
  key: AdminKey;
  owner: { id: number; email: string };
  alreadyRevoked: boolean;
}

export interface Plan {
  name: string;
  requestsPerMinute: number;
  requestsPerMonth: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  accountId: number | null;
  reason: string | null;
  requestId: string | null;
  details: Record<string, unknown> | null;
}
