/**
 * Steady-rate soak of one gateway process: `npm run bench:soak` (needs Redis on 127.0.0.1:6379).
 * Writes bench/results/local/soak.md (untracked), or bench/results/soak.md with BENCH_RECORD=1,
 * and exits non-zero on any unexpected status or socket error.
 *
 * The script starts the gateway (embedded PGlite store in a temp DATA_DIR, Redis with a key
 * prefix of its own, LOG_LEVEL=warn), issues keys through the portal API, then sends mixed
 * traffic at a fixed rate for SOAK_SECONDS after a warm-up: cached lists, creates, the
 * deprecated single-pet read, staging lists, a bad key (401) and one key kept over its account's
 * budget (429). It samples the gateway's resident memory every SOAK_RSS_INTERVAL_SECONDS. Everything
 * is on 127.0.0.1, bounded in time, and cleaned up (gateway stopped, Redis keys and temp dir removed).
 *
 * Settings: SOAK_SECONDS (300), SOAK_RATE (300 req/s), SOAK_WARMUP_SECONDS (15),
 * SOAK_RSS_INTERVAL_SECONDS (30), SOAK_REDIS_URL (redis://127.0.0.1:6379).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteRedisKeys } from './support/redis-keys';
import { percentile } from './support/latency';
import { loadAverage, machineDescription, rssMb, today } from './support/machine';
import { runPaced, type PacedOutcome, type PacedRequest } from './support/paced-client';
import { issueKey, logIn, signUp } from './support/portal-keys';
import { createOverLimitAccount, OVER_LIMIT_EMAIL } from './support/soak-accounts';
import { buildOnce, startGateway, type BenchGateway } from './support/processes';
import { SOAK_MIX, soakBudget, soakTraffic, type SoakKeys } from './support/soak-mix';
import { readBenchArguments } from './support/bench-arguments';
import { writeResults } from './support/results-file';

readBenchArguments(__filename);

const ROOT = join(__dirname, '..');
const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const RATE = Number(process.env.SOAK_RATE ?? 300);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? 15);
const RSS_INTERVAL_SECONDS = Number(process.env.SOAK_RSS_INTERVAL_SECONDS ?? 30);
const REDIS_URL = process.env.SOAK_REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_KEY_PREFIX = `asgsoak:${process.pid}:`;
const SEED_PETS = 20;
const interrupt = new AbortController();

class Tally {
  readonly latencies = new Map<string, number[]>();
  /** From when the request was actually sent: the server's share, without the client's lag. */
  readonly serviceLatencies = new Map<string, number[]>();
  readonly statuses = new Map<string, Map<string, number>>();
  unexpected = 0;
  socketErrors = 0;
  readonly samples: string[] = [];
  readonly sendLags: number[] = [];

  record = (o: PacedOutcome) => {
    this.sendLags.push(o.sendLagMs);
    if (!this.latencies.has(o.kind)) this.latencies.set(o.kind, []);
    this.latencies.get(o.kind)!.push(o.latencyMs);
    if (!this.serviceLatencies.has(o.kind)) this.serviceLatencies.set(o.kind, []);
    this.serviceLatencies.get(o.kind)!.push(o.latencyMs - o.sendLagMs);
    const byStatus = this.statuses.get(o.kind) ?? new Map<string, number>();
    this.statuses.set(o.kind, byStatus);
    const label = o.socketError ? 'socket error' : String(o.status);
    byStatus.set(label, (byStatus.get(label) ?? 0) + 1);
    const problem = o.socketError ?? o.unexpected;
    if (o.socketError) this.socketErrors++;
    else if (o.unexpected) this.unexpected++;
    if (problem && this.samples.length < 10) this.samples.push(`${o.kind}: ${problem}`);
  };

  all(which: 'due' | 'sent' = 'due'): number[] {
    return [...(which === 'due' ? this.latencies : this.serviceLatencies).values()].flat();
  }

  count(kind: string, status: string): number {
    return this.statuses.get(kind)?.get(status) ?? 0;
  }
}

/** Seeds pets and keys through the public surfaces only (portal API, /v1, /staging/v1). */
async function prepare(gw: BenchGateway, budget: ReturnType<typeof soakBudget>): Promise<SoakKeys> {
  const cookie = await signUp(gw.url, 'soak@example.com');
  const production: string[] = [];
  const staging: string[] = [];
  for (let i = 0; i < budget.productionKeys; i++) production.push(await issueKey(gw.url, cookie, `soak production ${i}`));
  for (let i = 0; i < budget.stagingKeys; i++) staging.push(await issueKey(gw.url, cookie, `soak staging ${i}`, 'staging'));
  const overLimit = await issueKey(gw.url, await logIn(gw.url, OVER_LIMIT_EMAIL), 'soak over-limit');
  const petIds: number[] = [];
  for (let i = 0; i < SEED_PETS; i++) {
    for (const [prefix, key] of [
      ['/v1', production[i % production.length]!],
      ['/staging/v1', staging[i % staging.length]!],
    ] as const) {
      const res = await fetch(`${gw.url}${prefix}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Seed pet ${i}`, categoryId: 1 + (i % 5) }),
      });
      if (res.status !== 201) throw new Error(`seeding ${prefix}/pets → ${res.status} ${await res.text()}`);
      const pet = (await res.json()) as { id: number };
      if (prefix === '/v1') petIds.push(pet.id);
    }
  }
  // Spend the over-limit account's whole budget now, so its refusals start at once, not a minute in.
  for (let sent = 0; sent < budget.quotaPerMinute; sent += 10) {
    const burst = Array.from({ length: Math.min(10, budget.quotaPerMinute - sent) }, () =>
      fetch(`${gw.url}/v1/pets?limit=5`, { headers: { authorization: `Bearer ${overLimit}` } }).then((r) => r.arrayBuffer()),
    );
    await Promise.all(burst);
  }
  return { production, staging, overLimit, petIds };
}

const ms = (n: number) => (Number.isNaN(n) ? '–' : n.toFixed(2));

async function main() {
  buildOnce();
  if (!(SECONDS > 0 && RATE > 0 && WARMUP_SECONDS >= 0 && RSS_INTERVAL_SECONDS > 0)) throw new Error('SOAK_SECONDS, SOAK_RATE and SOAK_RSS_INTERVAL_SECONDS must be positive');
  const budget = soakBudget(RATE);
  const loadBefore = loadAverage();
  console.error(`Soak on ${machineDescription()}: ${RATE} req/s for ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; load average ${loadBefore}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'asg-soak-'));
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let gw: BenchGateway | undefined;
  try {
    await createOverLimitAccount(dataDir, budget.quotaPerMinute);
    gw = await startGateway({
      DATA_DIR: dataDir,
      REDIS_URL,
      REDIS_KEY_PREFIX,
      LOG_LEVEL: 'warn',
      CACHE_TTL_SECONDS: '30',
      // The default plan: the steady keys' account's budget (the over-limit account has a plan of its own).
      RATE_LIMIT_PER_MINUTE: String(budget.steadyQuotaPerMinute),
      // All traffic comes from 127.0.0.1: the bad-key requests must stay 401, not meet the per-IP budget.
      ANONYMOUS_RATE_LIMIT_PER_MINUTE: '1000000',
      // One account holds every steady soak key, more than the default cap of 20 and the 50 new keys a day.
      MAX_KEYS_PER_ACCOUNT: String(budget.productionKeys + budget.stagingKeys),
      MAX_NEW_KEYS_PER_DAY: String(budget.productionKeys + budget.stagingKeys),
    });
    const readyOutput = gw.output().length;
    const keys = await prepare(gw, budget);
    const next: () => PacedRequest = soakTraffic(keys);

    const warmup = new Tally();
    if (WARMUP_SECONDS > 0) await runPaced({ url: gw.url, rate: RATE, seconds: WARMUP_SECONDS, agent, next, record: warmup.record, signal: interrupt.signal });
    console.error(`  warm-up done: ${warmup.all().length} requests, ${warmup.unexpected + warmup.socketErrors} unexpected`);

    const tally = new Tally();
    const rss: Array<{ at: number; mb: number }> = [{ at: 0, mb: rssMb(gw.pid) }];
    const started = Date.now();
    const pid = gw.pid;
    const sampler = setInterval(() => {
      if (Date.now() - started > (SECONDS - 1) * 1000) return; // the end sample follows
      const point = { at: Math.round((Date.now() - started) / 1000), mb: rssMb(pid) };
      rss.push(point);
      console.error(`  t=${point.at}s rss ${point.mb.toFixed(1)} MB, ${tally.all().length} requests, ${tally.unexpected + tally.socketErrors} unexpected`);
    }, RSS_INTERVAL_SECONDS * 1000);
    const run = await runPaced({ url: gw.url, rate: RATE, seconds: SECONDS, agent, next, record: tally.record, signal: interrupt.signal });
    clearInterval(sampler);
    rss.push({ at: Math.round((Date.now() - started) / 1000), mb: rssMb(gw.pid) });
    const logTail = gw.output().slice(readyOutput).trim();
    const logLines = logTail ? logTail.split('\n') : [];
    const exitCode = await gw.stop();

    const problems = tally.unexpected + tally.socketErrors + warmup.unexpected + warmup.socketErrors;
    const refused = tally.count('over-limit key', '429');
    const all = tally.all();
    const growth = rss[rss.length - 1]!.mb - rss[0]!.mb;
    const settledGrowth = rss.length > 2 ? rss[rss.length - 1]!.mb - rss[1]!.mb : 0;
    const lines = [
      '# Soak',
      '',
      ...(interrupt.signal.aborted ? ['**Interrupted before the planned end.**', ''] : []),
      `Measured ${today()} on ${machineDescription()}; load average ${loadBefore} before, ${loadAverage()} after.`,
      '',
      `One gateway process (embedded PGlite store in a temp DATA_DIR, Redis cache + limiter at ${REDIS_URL} with its own key prefix, LOG_LEVEL=warn, ` +
        `CACHE_TTL_SECONDS=30, RATE_LIMIT_PER_MINUTE=${budget.steadyQuotaPerMinute}). Open-loop client at **${RATE} req/s for ${SECONDS} s** after a ${WARMUP_SECONDS} s warm-up, ` +
        `keep-alive sockets; latency counts from when each request was due (wrk2-style), and also from when it was actually sent. ${keys.production.length} production and ${keys.staging.length} staging keys ` +
        `of one account, which sends at most half its per-minute budget in each environment; one more key, of an account on a plan of ${budget.quotaPerMinute} per minute, sent at twice that (budget spent before the warm-up).`,
      '',
      `Mix (per cent): ${Object.entries(SOAK_MIX).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
      '',
      '| class | requests | p50 ms | p99 ms | p50 ms from sent | p99 ms from sent | statuses |',
      '|---|---:|---:|---:|---:|---:|---|',
      ...[...tally.latencies.entries()].map(([kind, l]) => {
        const sent = tally.serviceLatencies.get(kind)!;
        const statuses = [...tally.statuses.get(kind)!.entries()].map(([s, n]) => `${s}: ${n}`).join(', ');
        return `| ${kind} | ${l.length} | ${ms(percentile(l, 0.5))} | ${ms(percentile(l, 0.99))} | ${ms(percentile(sent, 0.5))} | ${ms(percentile(sent, 0.99))} | ${statuses} |`;
      }),
      `| **all** | ${all.length} | ${ms(percentile(all, 0.5))} | ${ms(percentile(all, 0.99))} | ${ms(percentile(tally.all('sent'), 0.5))} | ${ms(percentile(tally.all('sent'), 0.99))} | |`,
      '',
      `- sent ${run.sent} in ${run.seconds.toFixed(1)} s: **${(run.sent / run.seconds).toFixed(1)} req/s** achieved; slowest request ${ms(all.reduce((a, b) => Math.max(a, b), 0))} ms`,
      `- client send lag (due → sent; the client's own delay, included in the latencies): p50 ${ms(percentile(tally.sendLags, 0.5))} ms, p99 ${ms(percentile(tally.sendLags, 0.99))} ms`,
      `- unexpected statuses: **${tally.unexpected}**, socket errors: **${tally.socketErrors}** (warm-up: ${warmup.unexpected} and ${warmup.socketErrors})` +
        (tally.samples.length || warmup.samples.length ? `; first: ${[...warmup.samples, ...tally.samples].slice(0, 5).join(' | ')}` : ''),
      `- over-limit key refused with 429: ${refused} times`,
      `- gateway RSS (MB) at t = ${rss.map((p) => `${p.at} s: ${p.mb.toFixed(1)}`).join(', ')}`,
      `- RSS growth from the start of the soak to its end: **${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB (${((growth / rss[0]!.mb) * 100).toFixed(1)} %)**`,
      // The first sample still holds start-up and warm-up garbage (PGlite's WASM heap settles after the first GCs).
      ...(rss.length > 2 ? [`- RSS growth from the second sample (t = ${rss[1]!.at} s) to the end: **${settledGrowth >= 0 ? '+' : ''}${settledGrowth.toFixed(1)} MB (${((settledGrowth / rss[1]!.mb) * 100).toFixed(1)} %)**`] : []),
      `- gateway log lines at warn or above during the run: ${logLines.length}${logLines.length ? ` (first: \`${logLines[0]!.slice(0, 200)}\`)` : ''}; exit code after SIGTERM: ${exitCode}`,
    ];
    const report = lines.join('\n');
    writeResults(ROOT, 'soak.md', report);
    console.log(report);
    if (problems > 0 || refused === 0 || interrupt.signal.aborted) process.exitCode = 1;
  } finally {
    agent.destroy();
    await gw?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await deleteRedisKeys(REDIS_URL, REDIS_KEY_PREFIX).catch((err: Error) => console.error(`could not delete Redis keys ${REDIS_KEY_PREFIX}*: ${err.message}`));
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // The first signal ends the traffic early; main then reports, stops the gateway and cleans up.
  process.on(signal, () => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
    console.error(`${signal}: stopping the traffic; again to leave without cleaning up`);
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
