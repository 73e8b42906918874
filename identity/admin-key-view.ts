import type { Environment } from '../openapi/environments';
import { dateOrNull, keyStatus, type KeyStatus } from './api-key-service';

/** A key as the operator sees it: everything but the secret, which is never stored. */
export interface AdminKeyView {
  id: string;
  accountId: number;
  name: string;
  prefix: string;
  environment: Environment;
  status: KeyStatus;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revocationReason: string | null;
  usage: { requests: number; deprecatedCalls: number };
}

export interface AdminKeyRow {
  id: string;
  account_id: string | number;
  name: string;
  prefix: string;
  environment: Environment;
  created_at: Date | string;
  last_used_at: Date | string | null;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  revocation_reason: string | null;
  requests: string | number;
  deprecated_calls: string | number;
}

export const ADMIN_KEY_COLUMNS =
  'id, account_id, name, prefix, environment, created_at, last_used_at, expires_at, revoked_at, revocation_reason, requests, deprecated_calls';


export function adminKeyView(row: AdminKeyRow, now: Date): AdminKeyView {
  const expiresAt = dateOrNull(row.expires_at);
  const revokedAt = dateOrNull(row.revoked_at);
  return {
    id: row.id,
    accountId: Number(row.account_id),
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    status: keyStatus({ revokedAt, expiresAt }, now),
    createdAt: new Date(row.created_at),
    lastUsedAt: dateOrNull(row.last_used_at),
    expiresAt,
    revokedAt,
    revocationReason: row.revocation_reason,
    usage: { requests: Number(row.requests), deprecatedCalls: Number(row.deprecated_calls) },
  };
}
