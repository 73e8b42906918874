import type { Database } from '../../db/database';
import { createAuditLog, type AuditLog } from '../../identity/audit-log';
import { migrateKeys } from '../../identity/migrations';
import { createPlanService, type PlanLimits, type PlanService } from '../../identity/plans';
import { createLocalRevocationBus } from '../../identity/revocation-bus';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../support/databases';

const ADMIN = { actor: 'admin:ops', requestId: 'req-race' } as const;
const PUTS = 6;

/**
 * Admins putting the same new plan at once. On PostgreSQL each put runs on its own pooled
 * connection, so the puts' transactions overlap; PGlite runs them one after another.
 */
describe.each(testDatabaseKinds())('putting one new plan concurrently on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let audit: AuditLog;
  let plans: PlanService;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    await migrateKeys(db);
    audit = createAuditLog({ db });
    plans = await createPlanService({ db, bus: createLocalRevocationBus(), audit, defaultRequestsPerMinute: 600, now: () => new Date() });
    // Opens a pooled connection per put beforehand, so the puts start together rather than one connect apart.
    await Promise.all(Array.from({ length: PUTS }, () => db.query('SELECT pg_sleep(0.05)')));
  });

  afterAll(async () => {
    plans?.close();
    await db?.close();
    await testDb?.destroy();
  });

  test('when several puts of a new plan run at once, then one creates it and each other updates it, auditing the definition it replaced', async () => {
    const limits: PlanLimits[] = Array.from({ length: PUTS }, (_, i) => ({ requestsPerMinute: 101 + i, requestsPerMonth: i % 2 ? null : 1_000 + i }));

    const results = await Promise.all(limits.map((l) => plans.put('race', l, ADMIN)));

    expect(results.filter((r) => r.created)).toHaveLength(1);
    results.forEach((r, i) => expect(r.plan).toMatchObject({ name: 'race', ...limits[i] }));
    const entries = (await audit.list({ limit: 100 })).entries.filter((e) => e.targetId === 'race').reverse();
    expect(entries.map((e) => e.action)).toEqual(['plan.created', ...Array<string>(PUTS - 1).fill('plan.updated')]);
    const defined = entries.map(({ details }) => ({ requestsPerMinute: details!.requestsPerMinute, requestsPerMonth: details!.requestsPerMonth }));
    expect(entries.map((e) => e.details!.was)).toEqual([undefined, ...defined.slice(0, -1)]);
    expect(defined.map((d) => d.requestsPerMinute).sort()).toEqual(limits.map((l) => l.requestsPerMinute));
    // Read back as what the audit recorded: the last definition audited is the one stored.
    expect(await db.query("SELECT requests_per_minute AS \"requestsPerMinute\", requests_per_month::int AS \"requestsPerMonth\" FROM accounts.plans WHERE name = 'race'")).toEqual([
      defined.at(-1),
    ]);
  });
});
