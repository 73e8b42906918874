/**
 * Reproducible gateway benchmark: `npm run bench` (needs `wrk`; nginx is used when installed).
 * Everything runs on 127.0.0.1, bounded in time, and stops by itself. Every path runs once per
 * round (BENCH_ROUNDS, default 5, interleaved), and ratios are taken within a round, so a drift
 * of the machine's speed between paths does not pass for a difference between them. Prints a
 * markdown table of the medians and writes it to bench/results/local/latest.md
 * (untracked), or to bench/results/latest.md with BENCH_RECORD=1.
 *
 * Paths measured, side by side in one run, all serving the same 20-pet JSON page:
 * - bare Node http serving the bytes from memory (the hit ceiling; also the fast upstream)
 * - the same with a gateway hit's seven headers (what the contract's headers cost any Node server)
 * - a bare Node proxy to the fast upstream (the miss floor), and http-proxy-middleware alone
 * - nginx proxy_cache hit and nginx reverse proxy to each upstream (the C anchors), when nginx exists
 * - the pet store called directly (the embedded upstream)
 * - the gateway: cache hit, and cache miss to the store and to the fast upstream, with the
 *   in-process cache and limiter and with Redis
 * - at one connection, the p50 the gateway adds over bare Node (hit) and the bare proxy (miss),
 *   the two taking turns on one connection each (support/paired-latency.ts)
 * The Redis gateways keep their accounts in PostgreSQL when it answers (BENCH_POSTGRES_URL), as
 * a deployment with Redis does; the in-process ones in the embedded PGlite, as `npm start` does.
 * With two cores, every server runs on core 0 and wrk on core 1 (BENCH_PIN=0: unpinned);
 * BENCH_ONLY=<regex> runs only the paths whose names match it.
 *
 * Settings: BENCH_ROUNDS (5), BENCH_DURATION (5s), BENCH_CONNECTIONS (50), BENCH_WARMUP (2s),
 * BENCH_REWARM (1s), BENCH_PAIRED_REQUESTS (2000), BENCH_STALL_SECONDS (5), BENCH_PIN (on),
 * BENCH_ONLY (every path), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_REDIS_URL (redis://127.0.0.1:6379/0), BENCH_RECORD (unset). Method and results: docs/benchmarks.md.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey, signUp } from './support/portal-keys';
import { buildOnce, builtEntry, CLIENT_CORE, freePort, onCore, PINNED, SERVER_CORE, startGateway, startNodeProcess } from './support/processes';
import { bareProxyScript, bytesServerScript, expressScript, HIT_HEADERS, middlewareProxyScript } from './support/reference-servers';
import { createBenchDatabase, type BenchDatabase } from './support/postgres-database';
import { machineDescription, rssMb } from './support/machine';
import { describeStalls, measureMachineStalls } from './support/machine-stalls';
import { childPids, cpuSeconds } from './support/process-cpu';
import { gcPauses, meanScavengeMs, pausesBetween, type GcPauses } from './support/gc-pauses';
import { requireWrk, runWrk, type WrkResult } from './support/wrk';
import { percentile } from './support/latency';
import { pairedLatency, type PairedTarget } from './support/paired-latency';
import { readBenchArguments } from './support/bench-arguments';
import { writeResults } from './support/results-file';

readBenchArguments(__filename);

const ROOT = join(__dirname, '..');
const DURATION = process.env.BENCH_DURATION ?? '5s';
/** Every path is measured once per round, rounds interleaved: this VM's speed drifts by tens of percent within minutes. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP = process.env.BENCH_WARMUP ?? '2s';
/** Before every later run too: a server idle while the other paths ran (V8 shrinks an idle heap) is measured back in its steady state. */
const REWARM = process.env.BENCH_REWARM ?? '1s';
/** Requests each server of a one-connection pair answers per round, taking turns in blocks of PAIRED_BLOCK. */
const PAIRED_REQUESTS = Number(process.env.BENCH_PAIRED_REQUESTS ?? 2000);
const PAIRED_BLOCK = 20;
/** How long the machine's own stalls are measured, with every server idle, before the first round and after the last. */
const STALL_SECONDS = Number(process.env.BENCH_STALL_SECONDS ?? 5);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** Only the paths whose names match (while working on one path); the ratios of paths not run say n/a. */
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : undefined;
const children: ChildProcess[] = [];
const stopChildren = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
};
// However the bench ends (an error, a closed stdout), no server it started outlives it.
process.once('exit', stopChildren);
let database: BenchDatabase | undefined;
const tmp = mkdtempSync(join(tmpdir(), 'asg-bench-'));

/** A built entry point (`petstore/main.ts` → dist) on the servers' core; resolves once its output matches `ready`. */
async function startNode(script: string, env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const { child } = await startNodeProcess({ name: script, args: [builtEntry(script)], env: { PATH: process.env.PATH, ...env }, ready, core: SERVER_CORE });
  children.push(child);
  return child;
}

async function json(url: string, init: RequestInit = {}): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url} → ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

interface BenchPath {
  name: string;
  url: string;
  headers?: Record<string, string>;
  connections?: number;
  /** The processes that answer this path (not its upstream): their CPU is what a request costs the server. */
  servers: () => number[];
  /** A gateway's GC pauses so far; undefined for the reference servers. */
  gc?: () => Promise<GcPauses>;
}

interface PathResult extends WrkResult {
  /** CPU (user + system) the path's server processes spent per request, in µs. */
  cpuUs: number;
  /** A gateway's GC pauses during the run. */
  gc?: GcPauses;
}

async function wrk(path: BenchPath, firstRound: boolean): Promise<PathResult> {
  const o = { name: path.name, url: path.url, headers: path.headers ?? {}, connections: path.connections ?? CONNECTIONS, core: CLIENT_CORE };
  // Steady state, not start-up: V8 compiles the hot path during the first thousands of requests.
  runWrk({ ...o, duration: firstRound ? WARMUP : REWARM });
  const pids = path.servers();
  const cpu = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const gcBefore = await path.gc?.();
  const cpuBefore = cpu();
  const run = runWrk({ ...o, duration: DURATION });
  const cpuUs = ((cpu() - cpuBefore) * 1e6) / run.requests;
  const gc = gcBefore && pausesBetween(gcBefore, await path.gc!());
  const result = { ...run, cpuUs, gc };
  console.error(
    `  ${path.name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(3)} ms, p99 ${result.p99.toFixed(3)} ms, ${result.cpuUs.toFixed(1)} µs CPU/req, errors ${result.errors}${gc ? `, ${describeGc(gc)}` : ''}`,
  );
  return result;
}

/** A gateway's one-connection p50 and its reference's, taking turns (ms). */
interface PairedP50s {
  gatewayP50: number;
  referenceP50: number;
}

const describeGc = (gc: GcPauses) =>
  `scavenges ${gc.scavenges} (mean ${meanScavengeMs(gc).toFixed(2)} ms), mark-compact pauses ${gc.majorMs.toFixed(1)} ms`;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A one-line Node server in its own process on the servers' core; resolves once it prints that it listens. */
async function startScript(script: string): Promise<ChildProcess> {
  const { child } = await startNodeProcess({ name: 'reference server (node -e)', args: ['-e', script], ready: /listening/, core: SERVER_CORE });
  children.push(child);
  return child;
}

function startNginx(upstreamPort: number, fastUpstreamPort: number): { cachePort: number; proxyPort: number; fastProxyPort: number; workers: () => number[] } | undefined {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const dir = join(tmp, 'nginx');
  mkdirSync(join(dir, 'cache'), { recursive: true });
  const cachePort = 18000 + Math.floor(Math.random() * 1000);
  const proxyPort = cachePort + 1;
  const fastProxyPort = cachePort + 2;
  writeFileSync(
    join(dir, 'nginx.conf'),
    `user root; worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  proxy_cache_path ${dir}/cache keys_zone=pets:10m;
  upstream store { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  upstream fast { server 127.0.0.1:${fastUpstreamPort}; keepalive 64; }
  server { listen 127.0.0.1:${cachePort};
    location / { proxy_cache pets; proxy_cache_valid 200 30s; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://store; } }
  server { listen 127.0.0.1:${proxyPort};
    location / { proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://store; } }
  server { listen 127.0.0.1:${fastProxyPort};
    location / { proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://fast; } }
}`,
  );
  const child = spawn(...onCore(SERVER_CORE, 'nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir]), { stdio: 'ignore' });
  children.push(child);
  // The master only supervises; the workers (and the cache manager) answer.
  return { cachePort, proxyPort, fastProxyPort, workers: () => childPids(child.pid!) };
}

async function main() {
  requireWrk();
  buildOnce();
  console.error(`Benchmark on ${machineDescription()}, ${DURATION} per run, ${CONNECTIONS} connections`);

  // The upstream: a standalone pet store with 20 pets.
  const storePort = await freePort();
  const storeProcess = await startNode('petstore/main.ts', { PETSTORE_PORT: String(storePort), DATA_DIR: join(tmp, 'store') }, /listening/);
  const store = `http://127.0.0.1:${storePort}`;
  for (let i = 0; i < 20; i++) await json(`${store}/pets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `Pet number ${i}`, categoryId: 1 + (i % 5) }) });
  const page = Buffer.from(await (await fetch(`${store}/pets`)).arrayBuffer());

  // The ceiling: bare Node serving the same bytes, in its own process (wrk runs synchronously here).
  const barePort = await freePort();
  const bare = await startScript(bytesServerScript(page, barePort));
  // The same with a hit's headers: the part of the hit's gap that is the contract's, not the gateway's.
  const hitHeadersPort = await freePort();
  const hitHeaders = await startScript(bytesServerScript(page, hitHeadersPort, HIT_HEADERS));
  // The fast upstream of a miss: another such server, so a miss measures the proxy, not the store.
  const fastPort = await freePort();
  const fast = await startScript(bytesServerScript(page, fastPort));
  const fastUpstream = `http://127.0.0.1:${fastPort}`;
  // The miss floor: bare Node proxying to it.
  const bareProxyPort = await freePort();
  const bareProxy = await startScript(bareProxyScript(fastPort, bareProxyPort));
  // And http-proxy-middleware alone, as the gateway uses it: what the package costs by itself.
  const middlewareProxyPort = await freePort();
  const middlewareProxy = await startScript(middlewareProxyScript(fastPort, middlewareProxyPort));
  const expressPort = await freePort();
  const plainExpress = await startScript(expressScript(page, expressPort));

  // The Redis gateways share one database, as a deployment's processes do.
  database = await createBenchDatabase(`asg_bench_gateway_${process.pid}`);
  const accountStore = database ? database.env : {};
  const gateways: Record<string, { url: string; key: string; pid: number; metricsUrl: string }> = {};
  for (const [name, env] of [
    ['memory', {}],
    ['redis', { ...accountStore, REDIS_URL, REDIS_KEY_PREFIX: `asgbench:${process.pid}:` }],
    // CACHE_TTL_SECONDS=0 turns the cache off: every request goes upstream (auth + limit + validation + proxy).
    ['memory-miss', { CACHE_TTL_SECONDS: '0' }],
    ['redis-miss', { ...accountStore, REDIS_URL, REDIS_KEY_PREFIX: `asgbench:${process.pid}:m:`, CACHE_TTL_SECONDS: '0' }],
    ['memory-fast-miss', { CACHE_TTL_SECONDS: '0', PRODUCTION_UPSTREAM: fastUpstream }],
    ['redis-fast-miss', { ...accountStore, REDIS_URL, REDIS_KEY_PREFIX: `asgbench:${process.pid}:f:`, CACHE_TTL_SECONDS: '0', PRODUCTION_UPSTREAM: fastUpstream }],
  ] as const) {
    // As npm start and the Docker image run it (their Node flags), on a port of its choosing. Its GC
    // pauses are read before and after each run from the metrics listener of its own, as a scraper
    // should: a request the main port's Express app answers costs the API path's next seconds about
    // 5 % more CPU per request (docs/benchmarks.md).
    const metricsPort = await freePort();
    const gateway = await startGateway(
      { PRODUCTION_UPSTREAM: store, ...env, METRICS_PORT: String(metricsPort), DATA_DIR: join(tmp, `gw-${name}`), RATE_LIMIT_PER_MINUTE: '10000000' },
      undefined,
      { core: SERVER_CORE },
    );
    children.push(gateway.child);
    const { url } = gateway;
    const key = await issueKey(url, await signUp(url, `bench-${name}@example.com`), 'bench');
    gateways[name] = { url, key, pid: gateway.pid, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
  }

  const nginx = startNginx(storePort, fastPort);
  await new Promise((r) => setTimeout(r, 500));
  // A gateway path's server is the gateway process; on a miss the store's CPU is its upstream's, not its own.
  const gatewayPath = (g: string) => ({
    url: `${gateways[g]!.url}/v1/pets`,
    headers: { Authorization: `Bearer ${gateways[g]!.key}` },
    servers: () => [gateways[g]!.pid],
    gc: () => gcPauses(gateways[g]!.metricsUrl),
  });
  // On a miss to the fast upstream, the upstream shares the core: its CPU is counted with the server's.
  const withFastUpstream = (path: BenchPath): BenchPath => ({ ...path, servers: () => [...path.servers(), fast.pid!] });
  const allPaths: BenchPath[] = [
    { name: 'bare Node http (ceiling)', url: `http://127.0.0.1:${barePort}/pets`, servers: () => [bare.pid!] },
    { name: "bare Node http, a hit's headers", url: `http://127.0.0.1:${hitHeadersPort}/pets`, servers: () => [hitHeaders.pid!] },
    ...(nginx
      ? [
          { name: 'nginx proxy_cache hit', url: `http://127.0.0.1:${nginx.cachePort}/pets`, servers: nginx.workers },
          { name: 'nginx reverse proxy (no cache)', url: `http://127.0.0.1:${nginx.proxyPort}/pets`, servers: nginx.workers },
          withFastUpstream({ name: 'nginx reverse proxy, fast upstream', url: `http://127.0.0.1:${nginx.fastProxyPort}/pets`, servers: nginx.workers }),
        ]
      : []),
    { name: 'plain Express 5 app, same bytes', url: `http://127.0.0.1:${expressPort}/pets`, servers: () => [plainExpress.pid!] },
    { name: 'pet store called directly', url: `${store}/pets`, servers: () => [storeProcess.pid!] },
    withFastUpstream({ name: 'bare Node proxy, fast upstream (miss floor)', url: `http://127.0.0.1:${bareProxyPort}/pets`, servers: () => [bareProxy.pid!] }),
    withFastUpstream({ name: 'http-proxy-middleware alone, fast upstream', url: `http://127.0.0.1:${middlewareProxyPort}/pets`, servers: () => [middlewareProxy.pid!] }),
    { name: 'gateway hit, in-process cache', ...gatewayPath('memory') },
    { name: 'gateway hit, Redis cache + Redis limiter', ...gatewayPath('redis') },
    { name: 'gateway miss, in-process', ...gatewayPath('memory-miss') },
    { name: 'gateway miss, Redis', ...gatewayPath('redis-miss') },
    withFastUpstream({ name: 'gateway miss, fast upstream, in-process', ...gatewayPath('memory-fast-miss') }),
    withFastUpstream({ name: 'gateway miss, fast upstream, Redis limiter', ...gatewayPath('redis-fast-miss') }),
    { name: 'bare Node, 1 connection', url: `http://127.0.0.1:${barePort}/pets`, connections: 1, servers: () => [bare.pid!] },
    { name: 'gateway hit (Redis), 1 connection', ...gatewayPath('redis'), connections: 1 },
    withFastUpstream({ name: 'bare Node proxy, 1 connection', url: `http://127.0.0.1:${bareProxyPort}/pets`, connections: 1, servers: () => [bareProxy.pid!] }),
    withFastUpstream({ name: 'gateway miss (fast, Redis), 1 connection', ...gatewayPath('redis-fast-miss'), connections: 1 }),
  ];
  const paths = ONLY ? allPaths.filter((p) => ONLY.test(p.name)) : allPaths;
  // The one-connection p50 a gateway adds, measured with its reference taking turns (paired-latency.ts).
  const onePath = (name: string): PairedTarget => allPaths.find((p) => p.name === name)!;
  const allPairs = [
    { name: 'one connection, paired: miss', gateway: onePath('gateway miss (fast, Redis), 1 connection'), reference: onePath('bare Node proxy, 1 connection') },
    { name: 'one connection, paired: hit', gateway: onePath('gateway hit (Redis), 1 connection'), reference: onePath('bare Node, 1 connection') },
  ];
  const pairs = ONLY ? allPairs.filter((p) => ONLY.test(p.name)) : allPairs;
  const pairedRounds: Array<Map<string, PairedP50s>> = [];
  const stallsBefore = await measureMachineStalls(STALL_SECONDS);
  console.error(`machine stalls before the runs: ${describeStalls(stallsBefore)}`);
  const rounds: Array<Map<string, PathResult>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`round ${round + 1} of ${ROUNDS}`);
    const results = new Map<string, PathResult>();
    for (const path of paths) results.set(path.name, await wrk(path, round === 0));
    rounds.push(results);
    const paired = new Map<string, PairedP50s>();
    for (const pair of pairs) {
      const [reference, gateway] = await pairedLatency([pair.reference, pair.gateway], { requests: PAIRED_REQUESTS, block: PAIRED_BLOCK });
      const result = { gatewayP50: percentile(gateway!, 0.5), referenceP50: percentile(reference!, 0.5) };
      console.error(`  ${pair.name}: p50 ${result.gatewayP50.toFixed(3)} ms, the reference's ${result.referenceP50.toFixed(3)} ms, added ${(result.gatewayP50 - result.referenceP50).toFixed(3)} ms`);
      paired.set(pair.name, result);
    }
    pairedRounds.push(paired);
  }
  const stallsAfter = await measureMachineStalls(STALL_SECONDS);
  const rss = Object.fromEntries(Object.entries(gateways).map(([n, g]) => [n, Math.round(rssMb(g.pid))]));

  /** Median over the rounds of a figure of one path, or of a ratio computed within each round. */
  const acrossOf = <R>(list: R[], figure: (round: R) => number | undefined) => {
    const values = list.map(figure).filter((v): v is number => v !== undefined && Number.isFinite(v));
    return values.length ? { median: median(values), min: Math.min(...values), max: Math.max(...values) } : undefined;
  };
  const across = (figure: (round: Map<string, PathResult>) => number | undefined) => acrossOf(rounds, figure);
  const ratio = (a: string, b: string, figure: 'rps' | 'cpuUs' = 'rps') => {
    const r = across((round) => (round.get(a) && round.get(b) ? round.get(a)![figure] / round.get(b)![figure] : undefined));
    return r ? `**${r.median.toFixed(2)}×** (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})` : 'n/a';
  };
  const HIT = 'gateway hit, Redis cache + Redis limiter';
  const MISS = 'gateway miss, fast upstream, Redis limiter';
  const BARE = 'bare Node http (ceiling)';
  const BARE_HEADERS = "bare Node http, a hit's headers";
  const BARE_PROXY = 'bare Node proxy, fast upstream (miss floor)';
  /** A figure across the rounds, as `median ms (rounds min–max)`. */
  const msText = (r: ReturnType<typeof across>) => (r ? `**${r.median.toFixed(3)} ms** (rounds ${r.min.toFixed(3)}–${r.max.toFixed(3)})` : 'n/a');
  const ms = (figure: (round: Map<string, PathResult>) => number | undefined) => msText(across(figure));
  const p99 = (name: string) => ms((round) => round.get(name)?.p99);
  const added = (a: string, b: string) => ms((round) => (round.get(a) && round.get(b) ? round.get(a)!.p50 - round.get(b)!.p50 : undefined));
  /** A pair's figure across the rounds, as `median ms (rounds min–max)`. */
  const pairedMs = (name: string, figure: (r: PairedP50s) => number) => msText(acrossOf(pairedRounds, (round) => (round.has(name) ? figure(round.get(name)!) : undefined)));
  const pairedAdded = (name: string) =>
    `${pairedMs(name, (r) => r.gatewayP50 - r.referenceP50)} (p50 ${pairedMs(name, (r) => r.gatewayP50)}, the reference's ${pairedMs(name, (r) => r.referenceP50)})`;
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; wrk -t1 -c${CONNECTIONS}, ${ROUNDS} interleaved rounds of ${DURATION} per path (a ${WARMUP} warm-up before the first, ${REWARM} before each later one); ${PINNED ? `servers on core ${SERVER_CORE}, wrk on core ${CLIENT_CORE}` : 'unpinned'}; Redis gateways on ${database ? 'PostgreSQL' : 'PGlite (PostgreSQL did not answer)'}, in-process ones on PGlite; medians of the rounds; gateways run the compiled build (dist/); body ${page.length} bytes (20 pets).`,
    '',
    '| path | req/s | p50 ms | p99 ms | server CPU µs/req | errors | gateway GC: mean scavenge ms, GC pause ms per s |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...paths.map((p) => {
      const runs = rounds.map((round) => round.get(p.name)!);
      const med = (key: 'rps' | 'p50' | 'p99' | 'cpuUs') => median(runs.map((r) => r[key]));
      const gc = runs.every((r) => r.gc)
        ? `${median(runs.map((r) => meanScavengeMs(r.gc!))).toFixed(2)}, ${median(runs.map((r) => ((r.gc!.scavengeMs + r.gc!.majorMs) * r.rps) / r.requests)).toFixed(1)}`
        : '';
      return `| ${p.name} | ${med('rps').toFixed(0)} | ${med('p50').toFixed(3)} | ${med('p99').toFixed(3)} | ${med('cpuUs').toFixed(1)} | ${runs.reduce((n, r) => n + r.errors, 0)} | ${gc} |`;
    }),
    '',
    'A miss to the fast upstream counts the upstream\'s CPU with the server\'s (they share the core). Ratios are computed within each round, then the median is taken:',
    `- the machine's own stalls, with every server idle (${STALL_SECONDS} s, one clock-reading spinner per core), before the runs: ${describeStalls(stallsBefore)}; after them: ${describeStalls(stallsAfter)}`,
    `- **miss** (fast upstream, Redis limiter) / bare Node proxy: ${ratio(MISS, BARE_PROXY)} (target ≥ 0.75×); in-process: ${ratio('gateway miss, fast upstream, in-process', BARE_PROXY)}; CPU per request ${ratio(MISS, BARE_PROXY, 'cpuUs')}; p99 ${p99(MISS)} (target ≤ 10 ms; the bare proxy's ${p99(BARE_PROXY)})`,
    `- http-proxy-middleware alone / bare Node proxy: ${ratio('http-proxy-middleware alone, fast upstream', BARE_PROXY)}; CPU per request ${ratio('http-proxy-middleware alone, fast upstream', BARE_PROXY, 'cpuUs')}; the gateway's miss / it: ${ratio(MISS, 'http-proxy-middleware alone, fast upstream')}`,
    `- **hit** (Redis) / bare Node: ${ratio(HIT, BARE)} (target ≥ 0.7×); in-process: ${ratio('gateway hit, in-process cache', BARE)}; CPU per request ${ratio(HIT, BARE, 'cpuUs')}; p99 ${p99(HIT)} (target ≤ 5 ms; bare Node's ${p99(BARE)})`,
    `- the hit's seven headers alone: bare Node with them / bare Node ${ratio(BARE_HEADERS, BARE)}; hit (Redis) / bare Node with them ${ratio(HIT, BARE_HEADERS)}; in-process ${ratio('gateway hit, in-process cache', BARE_HEADERS)}`,
    `- **one connection**, p50 added, the gateway and its reference taking turns (${PAIRED_REQUESTS} requests each a round, in blocks of ${PAIRED_BLOCK}): miss ${pairedAdded('one connection, paired: miss')} over the bare Node proxy; hit ${pairedAdded('one connection, paired: hit')} over bare Node (target ≤ 0.1 ms each)`,
    `- one connection, p50 added, from the separate wrk runs of the table: miss ${added('gateway miss (fast, Redis), 1 connection', 'bare Node proxy, 1 connection')}, hit ${added('gateway hit (Redis), 1 connection', 'bare Node, 1 connection')}`,
    `- against nginx: hit (Redis) / proxy_cache hit ${ratio(HIT, 'nginx proxy_cache hit')}; miss / reverse proxy to the fast upstream ${ratio(MISS, 'nginx reverse proxy, fast upstream')}; bare Node proxy / the same ${ratio(BARE_PROXY, 'nginx reverse proxy, fast upstream')}`,
    `- miss to the embedded store (Redis) / nginx reverse proxy to it: ${ratio('gateway miss, Redis', 'nginx reverse proxy (no cache)')}; in-process: ${ratio('gateway miss, in-process', 'nginx reverse proxy (no cache)')} (the store is the limit of both)`,
    `- gateway hit (Redis) / plain Express 5: ${ratio(HIT, 'plain Express 5 app, same bytes')}`,
    `- gateway resident memory after the run (MB): ${Object.entries(rss).map(([n, v]) => `${n} ${v}`).join(', ')}`,
  ];
  const report = lines.join('\n');
  writeResults(ROOT, 'latest.md', report);
  console.log(report);
}

function cleanup() {
  stopChildren();
  rmSync(tmp, { recursive: true, force: true });
  // After the gateways have let go of it.
  if (database) setTimeout(() => void database!.drop().catch((err: unknown) => console.error('could not drop the bench database', err)), 1000);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => setTimeout(cleanup, 300));
