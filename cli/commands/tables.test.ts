import type { AccountSummary, AdminKey, AuditEntry, Plan } from '../api-types';
import { accountFields, accountTable } from './accounts';
import { auditTable } from './audit';
import { keyTable } from './keys';
import { planTable } from './plans';

const account: AccountSummary = {
  id: 3,
  email: 'dev@example.com',
  createdAt: '2026-11-25T03:14:17.123Z',
  status: 'suspended',
  suspendedAt: '2026-11-26T08:00:00.000Z',
  suspensionReason: 'abuse report #12',
  plan: 'default',
  keyCount: 2,
  requestsThisMonth: 1234,
};

const key: AdminKey = {
  id: 'key_abc',
  accountId: 3,
  name: 'production key',
  prefix: 'asg_prod_Ab12Cd',
  environment: 'production',
  status: 'active',
  createdAt: '2026-11-25T03:15:00.000Z',
  lastUsedAt: null,
  expiresAt: null,
  revokedAt: null,
  revocationReason: null,
  usage: { requests: 17, deprecatedCalls: 0 },
};

describe('the tables', () => {
  test('when accounts are listed, then one line each with times in UTC to the second', () => {
    expect(accountTable([account])).toBe(
      [
        'ID  EMAIL            STATUS     PLAN     KEYS  REQUESTS THIS MONTH  CREATED',
        '3   dev@example.com  suspended  default  2     1234                 2026-11-25 03:14:17Z',
        '',
      ].join('\n'),
    );
  });

  test('when a suspended account is shown, then when and why; when an active one, then neither', () => {
    expect(accountFields(account)).toBe(
      [
        'id                   3',
        'email                dev@example.com',
        'status               suspended',
        'suspended at         2026-11-26 08:00:00Z',
        'reason               abuse report #12',
        'plan                 default',
        'keys                 2',
        'requests this month  1234',
        'created              2026-11-25 03:14:17Z',
        '',
      ].join('\n'),
    );
    expect(accountFields({ ...account, status: 'active', suspendedAt: null, suspensionReason: null })).not.toMatch(/suspended at|reason/);
  });

  test('when keys are listed, then never-used and never-expiring show "-"', () => {
    expect(keyTable([key])).toBe(
      [
        'ID       ACCOUNT  NAME            PREFIX           ENV         STATUS  CREATED               LAST USED  EXPIRES  REQUESTS',
        'key_abc  3        production key  asg_prod_Ab12Cd  production  active  2026-11-25 03:15:00Z  -          -        17',
        '',
      ].join('\n'),
    );
  });

  test('when plans are listed, then no monthly quota reads "none"', () => {
    const plans: Plan[] = [
      { name: 'default', requestsPerMinute: 600, requestsPerMonth: null, createdAt: '2026-11-25T00:00:00Z', updatedAt: '2026-11-25T00:00:00Z' },
      { name: 'gold', requestsPerMinute: 6000, requestsPerMonth: 1000000, createdAt: '2026-11-25T00:00:00Z', updatedAt: '2026-11-26T00:00:00Z' },
    ];
    expect(planTable(plans)).toBe(
      [
        'NAME     PER MINUTE  PER MONTH  CREATED               UPDATED',
        'default  600         none       2026-11-25 00:00:00Z  2026-11-25 00:00:00Z',
        'gold     6000        1000000    2026-11-25 00:00:00Z  2026-11-26 00:00:00Z',
        '',
      ].join('\n'),
    );
  });

  test('when audit entries are listed, then the target on one cell and the details as name=value', () => {
    const entry: AuditEntry = {
      id: 9,
      at: '2026-11-26T08:00:00Z',
      actor: 'admin:ops',
      action: 'account.plan_changed',
      targetType: 'account',
      targetId: '3',
      accountId: 3,
      reason: null,
      requestId: 'req-1',
      details: { from: 'default', to: 'gold' },
    };
    expect(auditTable([entry, { ...entry, id: 8, action: 'account.suspended', reason: 'spam', details: null }])).toBe(
      [
        'ID  AT                    ACTOR      ACTION                TARGET     ACCOUNT  REASON  DETAILS',
        '9   2026-11-26 08:00:00Z  admin:ops  account.plan_changed  account 3  3        -       from=default to=gold',
        '8   2026-11-26 08:00:00Z  admin:ops  account.suspended     account 3  3        spam    -',
        '',
      ].join('\n'),
    );
  });
});
