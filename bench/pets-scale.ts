/**
 * List latency with a large store: `npm run bench:scale` (needs `wrk` and PostgreSQL on
 * 127.0.0.1:5432 with trust auth). Writes bench/results/local/pets-scale.md
 * (untracked), or bench/results/pets-scale.md with BENCH_RECORD=1.
 *
 * For each store (PostgreSQL, PGlite) and each size (100 and 1,000,000 pets) the script makes a
 * throw-away store, runs the real migrations, fills `pets` with one INSERT … SELECT
 * generate_series, VACUUM ANALYZEs, starts a gateway on it in its own process with the list
 * cache off (every list reaches the store) and measures three list pages with wrk at a fixed
 * concurrency, alternating between the sizes. At the largest size it also records
 * EXPLAIN (ANALYZE, BUFFERS) of the repository's own list statements. Everything is on 127.0.0.1, bounded, and cleaned up
 * (databases dropped, temp dirs removed) even when a step fails or the run is interrupted.
 *
 * Settings: BENCH_SCALE_STORES (postgres,pglite), BENCH_SCALE_ROWS (100,1000000),
 * BENCH_SCALE_DURATION (4s per run), BENCH_SCALE_REPEATS (3 runs per case and size; medians
 * reported), BENCH_SCALE_CONNECTIONS (8),
 * BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/postgres, the admin database).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../db/database';
import { openPglite } from '../db/pglite-database';
import { openPostgres } from '../db/postgres-database';
import type { ListQuery } from '../petstore/pet-repository';
import { explainList, type ExplainedQuery } from './support/explain-list';
import { loadAverage, machineDescription, rssMb, today } from './support/machine';
import { migrateAndFillPets } from './support/pet-table';
import { issueKey, signUp } from './support/portal-keys';
import { buildOnce, startGateway, type BenchGateway } from './support/processes';
import { requireWrk, runWrk, type WrkResult } from './support/wrk';
import { createBenchDatabase, POSTGRES_ADMIN_URL } from './support/postgres-database';
import { readBenchArguments } from './support/bench-arguments';
import { writeResults } from './support/results-file';

readBenchArguments(__filename);

type StoreKind = 'postgres' | 'pglite';

const ROOT = join(__dirname, '..');
const STORES = (process.env.BENCH_SCALE_STORES ?? 'postgres,pglite').split(',').map((s) => s.trim()) as StoreKind[];
const SIZES = (process.env.BENCH_SCALE_ROWS ?? '100,1000000').split(',').map(Number).sort((a, b) => a - b);
const DURATION = process.env.BENCH_SCALE_DURATION ?? '4s';
const REPEATS = Number(process.env.BENCH_SCALE_REPEATS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 8);
const PAGE = 20;

/** Undo steps, run last-in first-out at the end and on Ctrl-C. */
const cleanups: Array<() => Promise<unknown> | unknown> = [];
async function cleanUp() {
  while (cleanups.length) {
    try {
      await cleanups.pop()!();
    } catch (err) {
      console.error(`cleanup: ${(err as Error).message}`);
    }
  }
}

interface ListCase {
  name: string;
  query: ListQuery;
}

/**
 * The pages measured at a size. Cursors sit near the end of the table, a little closer at 100
 * rows so that every page is still full there (a short page would not be the same work).
 */
function casesFor(rows: number): ListCase[] {
  const big = rows > 10_000;
  return [
    { name: 'first page', query: { limit: PAGE } },
    { name: 'deep page', query: { limit: PAGE, after: big ? rows - 1000 : rows - 2 * PAGE } },
    { name: 'filtered deep page', query: { limit: PAGE, status: 'available', after: big ? Math.floor(rows * 0.9) : rows - 3 * PAGE } },
  ];
}

const pathOf = ({ limit, status, after }: ListQuery) =>
  `/v1/pets?limit=${limit}${status ? `&status=${status}` : ''}${after !== undefined ? `&after=${after}` : ''}`;

/** A fresh store of one kind holding `rows` pets; returns how the gateway reaches it. */
async function freshStore(kind: StoreKind, rows: number): Promise<{ env: Record<string, string>; open(): Promise<Database> }> {
  if (kind === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), `asg-bench-scale-${rows}-`));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    return { env: { DATA_DIR: dataDir }, open: () => openPglite(dataDir) };
  }
  const database = await createBenchDatabase(`asg_bench_scale_${process.pid}_${rows}`);
  if (!database) throw new Error(`PostgreSQL does not answer at ${POSTGRES_ADMIN_URL} (BENCH_POSTGRES_URL)`);
  cleanups.push(() => database.drop());
  return { env: database.env, open: () => openPostgres({ connectionString: database.url, queryTimeoutMs: 600_000 }) };
}

/** The page must be a full 200 page, or the timing would measure something else. */
async function checkPage(gw: BenchGateway, key: string, c: ListCase) {
  const res = await fetch(gw.url + pathOf(c.query), { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as unknown[];
  if (res.status !== 200 || !Array.isArray(body) || body.length !== PAGE) throw new Error(`${c.name}: ${res.status} with ${JSON.stringify(body).slice(0, 200)}`);
}

interface SizeResult {
  store: StoreKind;
  rows: number;
  fillSeconds: number;
  /** Per case, the median of the repeated runs (each figure on its own). */
  results: WrkResult[];
  explains: ExplainedQuery[];
  rssMb: number;
}

interface PreparedSize {
  rows: number;
  fillSeconds: number;
  explains: ExplainedQuery[];
  gw: BenchGateway;
  headers: Record<string, string>;
}

/** Fills a fresh store, explains the list statements at the largest size, starts a gateway on it. */
async function prepare(kind: StoreKind, rows: number): Promise<PreparedSize> {
  const store = await freshStore(kind, rows);
  const db = await store.open();
  const explains: ExplainedQuery[] = [];
  const started = Date.now();
  let fillSeconds: number;
  try {
    await migrateAndFillPets(db, rows);
    fillSeconds = (Date.now() - started) / 1000;
    console.error(`  ${kind}: ${fmt(rows)} pets filled, vacuumed and analysed in ${fillSeconds.toFixed(1)} s`);
    if (rows === SIZES[SIZES.length - 1]) {
      const filtered = casesFor(rows)[2]!;
      // The rarest status too: the planner may pick another index for it.
      const statements = [...casesFor(rows), { name: 'filtered deep page, rarest status', query: { ...filtered.query, status: 'sold' as const } }];
      for (const c of statements) explains.push(await explainList(db, `${c.name}: ${pathOf(c.query)}`, c.query));
    }
    await db.close(); // PGlite serves one process: the gateway opens it next
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  const gw = await startGateway({ ...store.env, CACHE_TTL_SECONDS: '0', RATE_LIMIT_PER_MINUTE: '10000000' });
  cleanups.push(() => gw.stop());
  const key = await issueKey(gw.url, await signUp(gw.url, `scale-${kind}-${rows}@example.com`), 'scale bench');
  for (const c of casesFor(rows)) await checkPage(gw, key, c);
  return { rows, fillSeconds, explains, gw, headers: { Authorization: `Bearer ${key}` } };
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

/**
 * All sizes of one store side by side: every size has its own gateway, and the runs alternate
 * between sizes case by case, so a burst of other work on this shared machine lands on both
 * sides of a ratio rather than on one.
 */
async function measureStore(kind: StoreKind): Promise<SizeResult[]> {
  const sizes: PreparedSize[] = [];
  for (const rows of SIZES) sizes.push(await prepare(kind, rows));
  for (const s of sizes) runWrk({ name: 'warm-up', url: s.gw.url + pathOf(casesFor(s.rows)[0]!.query), headers: s.headers, connections: CONNECTIONS, duration: '2s' });
  const caseCount = casesFor(SIZES[0]!).length;
  const runs = sizes.map(() => Array.from({ length: caseCount }, () => [] as WrkResult[]));
  for (let c = 0; c < caseCount; c++) {
    for (let rep = 0; rep < REPEATS; rep++) {
      sizes.forEach((s, i) => {
        const listCase = casesFor(s.rows)[c]!;
        const r = runWrk({ name: listCase.name, url: s.gw.url + pathOf(listCase.query), headers: s.headers, connections: CONNECTIONS, duration: DURATION });
        console.error(`    ${kind} ${fmt(s.rows)} ${listCase.name} #${rep + 1}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, errors ${r.errors}`);
        runs[i]![c]!.push(r);
      });
    }
  }
  const results = sizes.map((s, i) => ({
    store: kind,
    rows: s.rows,
    fillSeconds: s.fillSeconds,
    explains: s.explains,
    rssMb: rssMb(s.gw.pid),
    results: runs[i]!.map((reps) => ({
      name: reps[0]!.name,
      p50: median(reps.map((r) => r.p50)),
      p99: median(reps.map((r) => r.p99)),
      rps: median(reps.map((r) => r.rps)),
      requests: reps.reduce((n, r) => n + r.requests, 0),
      errors: reps.reduce((n, r) => n + r.errors, 0),
    })),
  }));
  await cleanUp(); // stop these gateways and drop these stores before the next kind
  return results;
}

const fmt = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => n.toFixed(2);

function report(all: SizeResult[], loadBefore: string): string {
  const small = SIZES[0]!;
  const large = SIZES[SIZES.length - 1]!;
  const lines = [
    `# Pet list at scale`,
    '',
    `Measured ${today()} on ${machineDescription()}; load average ${loadBefore} before, ${loadAverage()} after. Gateway in its own process, CACHE_TTL_SECONDS=0 (every list reaches the store), ` +
      `wrk -t1 -c${CONNECTIONS} -d${DURATION}, ${REPEATS} runs per case and size alternating between the sizes, medians shown, after a 2 s warm-up; pages of ${PAGE}. Store filled with INSERT … SELECT generate_series ` +
      `(60 % available, 30 % pending, 10 % sold), then VACUUM (ANALYZE).`,
    '',
    `| store | case | ${fmt(small)}: p50 ms | p99 ms | req/s | ${fmt(large)}: p50 ms | p99 ms | req/s | p50 ${fmt(large)}/${fmt(small)} |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const verdicts: string[] = [];
  for (const store of STORES) {
    const a = all.find((r) => r.store === store && r.rows === small);
    const b = all.find((r) => r.store === store && r.rows === large);
    if (!a || !b) continue;
    a.results.forEach((ra, i) => {
      const rb = b.results[i]!;
      const ratio = rb.p50 / ra.p50;
      verdicts.push(ratio <= 2 ? '' : `${store} ${rb.name}`);
      lines.push(`| ${store} | ${rb.name} | ${ms(ra.p50)} | ${ms(ra.p99)} | ${ra.rps.toFixed(0)} | ${ms(rb.p50)} | ${ms(rb.p99)} | ${rb.rps.toFixed(0)} | **${ratio.toFixed(2)}×** |`);
    });
  }
  const missed = verdicts.filter(Boolean);
  lines.push(
    '',
    ...casesFor(small).map((c, i) => `- ${c.name}: \`${pathOf(casesFor(large)[i]!.query)}\` at ${fmt(large)} rows, \`${pathOf(c.query)}\` at ${fmt(small)}`),
    '',
    `Target: p50 at ${fmt(large)} within 2× of ${fmt(small)} — ${missed.length ? `**missed** for ${missed.join(', ')}` : '**met** for every case'}.`,
    '',
    `Errors (non-2xx or socket) during the runs: ${all.reduce((n, r) => n + r.results.reduce((m, x) => m + x.errors, 0), 0)}. ` +
      `Fill time and gateway RSS after the runs: ${all.map((r) => `${r.store} ${fmt(r.rows)}: ${r.fillSeconds.toFixed(1)} s, ${r.rssMb.toFixed(0)} MB`).join('; ')}.`,
  );
  for (const r of all.filter((x) => x.explains.length)) {
    lines.push('', `## EXPLAIN (ANALYZE, BUFFERS) at ${fmt(r.rows)} rows — ${r.store}`, '', '| statement | scans | whole-table work | execution ms |', '|---|---|---|---:|');
    for (const e of r.explains) lines.push(`| ${e.name} | ${e.scans.join(', ') || 'none'} | ${e.problems.join(', ') || 'none'} | ${e.executionMs.toFixed(3)} |`);
    for (const e of r.explains) {
      lines.push('', `**${e.name}** — parameters \`${JSON.stringify(e.params)}\``, '', '```sql', e.sql, '```', '', '```', e.plan, '```');
    }
  }
  return lines.join('\n');
}

async function main() {
  requireWrk();
  buildOnce();
  console.error(`Scale benchmark on ${machineDescription()}, load average ${loadAverage()}: stores ${STORES.join(', ')}; sizes ${SIZES.map(fmt).join(', ')}; ${DURATION} per case, ${CONNECTIONS} connections`);
  const loadBefore = loadAverage();
  const all: SizeResult[] = [];
  for (const store of STORES) all.push(...(await measureStore(store)));
  const text = report(all, loadBefore);
  writeResults(ROOT, 'pets-scale.md', text);
  console.log(text);
  const errors = all.reduce((n, r) => n + r.results.reduce((m, x) => m + x.errors, 0), 0);
  const problems = all.flatMap((r) => r.explains.flatMap((e) => e.problems));
  if (errors || problems.length) process.exitCode = 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => cleanUp());
