/**
 * Reproducible gateway benchmark: `npm run bench` (needs `wrk`; nginx is used when installed).
 * Everything runs on 127.0.0.1, bounded in time, and stops by itself. Every path runs once per
 * round (BENCH_ROUNDS, default 5, interleaved), and ratios are taken within a round, so a drift
 * of the machine's speed between paths does not pass for a difference between them. Prints a
 * markdown table of the medians and writes it to bench/results/local/latest.md
 * (untracked), or to bench/results/latest.md with BENCH_RECORD=1.
 *
 * Paths measured, side by side in one run, all serving the same 20-pet JSON page:
 * - bare Node http serving the bytes from memory (the ceiling)
 * - nginx proxy_cache hit and nginx reverse proxy to the store (the C anchors), when nginx exists
 * - the pet store called directly (the upstream)
 * - the gateway: cache hit and cache miss, with the in-process cache and with Redis
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce, builtEntry, freePort, startGateway } from './support/processes';
import { rssMb } from './support/machine';
import { describeStalls, measureMachineStalls } from './support/machine-stalls';
import { childPids, cpuSeconds } from './support/process-cpu';
import { gcPauses, meanScavengeMs, pausesBetween, type GcPauses } from './support/gc-pauses';
import { requireWrk, runWrk, type WrkResult } from './support/wrk';
import { writeResults } from './support/results-file';

const ROOT = join(__dirname, '..');
const DURATION = process.env.BENCH_DURATION ?? '5s';
/** Every path is measured once per round, rounds interleaved: this VM's speed drifts by tens of percent within minutes. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP = process.env.BENCH_WARMUP ?? '2s';
/** Before every later run too: a server idle while the other paths ran (V8 shrinks an idle heap) is measured back in its steady state. */
const REWARM = process.env.BENCH_REWARM ?? '1s';
/** How long the machine's own stalls are measured, with every server idle, before the first round and after the last. */
const STALL_SECONDS = Number(process.env.BENCH_STALL_SECONDS ?? 5);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** The gateways' GET /metrics token: their GC pauses are read before and after each run. */
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const children: ChildProcess[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'asg-bench-'));

function startNode(script: string, env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [builtEntry(script)], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      if (ready.test(out)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
  });
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
  const o = { name: path.name, url: path.url, headers: path.headers ?? {}, connections: path.connections ?? CONNECTIONS };
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

const describeGc = (gc: GcPauses) =>
  `scavenges ${gc.scavenges} (mean ${meanScavengeMs(gc).toFixed(2)} ms), mark-compact pauses ${gc.majorMs.toFixed(1)} ms`;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function startNginx(upstreamPort: number): { cachePort: number; proxyPort: number; workers: () => number[] } | undefined {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const dir = join(tmp, 'nginx');
  mkdirSync(join(dir, 'cache'), { recursive: true });
  const cachePort = 18000 + Math.floor(Math.random() * 1000);
  const proxyPort = cachePort + 1;
  writeFileSync(
    join(dir, 'nginx.conf'),
    `user root; worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  proxy_cache_path ${dir}/cache keys_zone=pets:10m;
  upstream store { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server { listen 127.0.0.1:${cachePort};
    location / { proxy_cache pets; proxy_cache_valid 200 30s; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://store; } }
  server { listen 127.0.0.1:${proxyPort};
    location / { proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://store; } }
}`,
  );
  const child = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'ignore' });
  children.push(child);
  // The master only supervises; the workers (and the cache manager) answer.
  return { cachePort, proxyPort, workers: () => childPids(child.pid!) };
}

async function main() {
  requireWrk();
  buildOnce();
  console.error(`Benchmark on ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}, ${DURATION} per run, ${CONNECTIONS} connections`);

  // The upstream: a standalone pet store with 20 pets.
  const storePort = await freePort();
  const storeProcess = await startNode('petstore/main.ts', { PETSTORE_PORT: String(storePort), DATA_DIR: join(tmp, 'store') }, /listening/);
  const store = `http://127.0.0.1:${storePort}`;
  for (let i = 0; i < 20; i++) await json(`${store}/pets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `Pet number ${i}`, categoryId: 1 + (i % 5) }) });
  const page = Buffer.from(await (await fetch(`${store}/pets`)).arrayBuffer());

  // The ceiling: bare Node serving the same bytes, in its own process (wrk runs synchronously here).
  const barePort = await freePort();
  const bareScript = `const body = Buffer.from(${JSON.stringify(page.toString('base64'))}, 'base64');
require('node:http').createServer((q, s) => { s.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }); s.end(body); })
  .listen(${barePort}, '127.0.0.1', () => console.log('listening'));`;
  const bare = spawn(process.execPath, ['-e', bareScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(bare);
  await new Promise((r) => bare.stdout!.once('data', r));

  // What a naive design gets: a plain Express 5 app sending the same bytes, no auth, no limit.
  const expressPort = await freePort();
  const expressScript = `const body = Buffer.from(${JSON.stringify(page.toString('base64'))}, 'base64');
const app = require('express')(); app.disable('x-powered-by');
app.get('/pets', (q, s) => { s.type('application/json; charset=utf-8'); s.send(body); });
app.listen(${expressPort}, '127.0.0.1', () => console.log('listening'));`;
  const plainExpress = spawn(process.execPath, ['-e', expressScript], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(plainExpress);
  await new Promise((r) => plainExpress.stdout!.once('data', r));

  const gateways: Record<string, { url: string; key: string; pid: number }> = {};
  for (const [name, env] of [
    ['memory', {}],
    ['redis', { REDIS_URL, REDIS_KEY_PREFIX: `asgbench:${process.pid}:` }],
    // CACHE_TTL_SECONDS=0 turns the cache off: every request goes upstream (auth + limit + validation + proxy).
    ['memory-miss', { CACHE_TTL_SECONDS: '0' }],
    ['redis-miss', { REDIS_URL, REDIS_KEY_PREFIX: `asgbench:${process.pid}:m:`, CACHE_TTL_SECONDS: '0' }],
  ] as const) {
    // As npm start and the Docker image run it (their Node flags), on a port of its choosing.
    const gateway = await startGateway({ ...env, METRICS_TOKEN, DATA_DIR: join(tmp, `gw-${name}`), PRODUCTION_UPSTREAM: store, RATE_LIMIT_PER_MINUTE: '10000000' });
    children.push(gateway.child);
    const { url } = gateway;
    const signup = await fetch(`${url}/portal/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `bench-${name}@example.com`, password: 'benchmark passphrase' }) });
    const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
    const { key } = await json(`${url}/portal/api/keys`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: '{"name":"bench"}' });
    gateways[name] = { url, key, pid: gateway.pid };
  }

  const nginx = startNginx(storePort);
  await new Promise((r) => setTimeout(r, 500));
  // A gateway path's server is the gateway process; on a miss the store's CPU is its upstream's, not its own.
  const gatewayPath = (g: string) => ({
    url: `${gateways[g]!.url}/v1/pets`,
    headers: { Authorization: `Bearer ${gateways[g]!.key}` },
    servers: () => [gateways[g]!.pid],
    gc: () => gcPauses(`${gateways[g]!.url}/metrics`, METRICS_TOKEN),
  });
  const paths: BenchPath[] = [
    { name: 'bare Node http (ceiling)', url: `http://127.0.0.1:${barePort}/pets`, servers: () => [bare.pid!] },
    ...(nginx
      ? [
          { name: 'nginx proxy_cache hit', url: `http://127.0.0.1:${nginx.cachePort}/pets`, servers: nginx.workers },
          { name: 'nginx reverse proxy (no cache)', url: `http://127.0.0.1:${nginx.proxyPort}/pets`, servers: nginx.workers },
        ]
      : []),
    { name: 'plain Express 5 app, same bytes', url: `http://127.0.0.1:${expressPort}/pets`, servers: () => [plainExpress.pid!] },
    { name: 'pet store called directly', url: `${store}/pets`, servers: () => [storeProcess.pid!] },
    { name: 'gateway hit, in-process cache', ...gatewayPath('memory') },
    { name: 'gateway hit, Redis cache + Redis limiter', ...gatewayPath('redis') },
    { name: 'gateway miss, in-process', ...gatewayPath('memory-miss') },
    { name: 'gateway miss, Redis', ...gatewayPath('redis-miss') },
    { name: 'bare Node, 1 connection', url: `http://127.0.0.1:${barePort}/pets`, connections: 1, servers: () => [bare.pid!] },
    { name: 'gateway hit (Redis), 1 connection', ...gatewayPath('redis'), connections: 1 },
  ];
  const stallsBefore = await measureMachineStalls(STALL_SECONDS);
  console.error(`machine stalls before the runs: ${describeStalls(stallsBefore)}`);
  const rounds: Array<Map<string, PathResult>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`round ${round + 1} of ${ROUNDS}`);
    const results = new Map<string, PathResult>();
    for (const path of paths) results.set(path.name, await wrk(path, round === 0));
    rounds.push(results);
  }
  const stallsAfter = await measureMachineStalls(STALL_SECONDS);
  const rss = Object.fromEntries(Object.entries(gateways).map(([n, g]) => [n, Math.round(rssMb(g.pid))]));

  /** Median over the rounds of a figure of one path, or of a ratio computed within each round. */
  const across = (figure: (round: Map<string, PathResult>) => number | undefined) => {
    const values = rounds.map(figure).filter((v): v is number => v !== undefined && Number.isFinite(v));
    return values.length ? { median: median(values), min: Math.min(...values), max: Math.max(...values) } : undefined;
  };
  const ratio = (a: string, b: string, figure: 'rps' | 'cpuUs' = 'rps') => {
    const r = across((round) => (round.get(a) && round.get(b) ? round.get(a)![figure] / round.get(b)![figure] : undefined));
    return r ? `**${r.median.toFixed(2)}×** (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})` : 'n/a';
  };
  const hit1 = across((round) => round.get('gateway hit (Redis), 1 connection')!.p50 - round.get('bare Node, 1 connection')!.p50);
  const hitP99 = across((round) => round.get('gateway hit, Redis cache + Redis limiter')?.p99);
  // What this machine allows any Node server in the same rounds: the p99 target is absolute, the machine's speed is not.
  const bareP99 = across((round) => round.get('bare Node http (ceiling)')?.p99);
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}; wrk -t1 -c${CONNECTIONS}, ${ROUNDS} interleaved rounds of ${DURATION} per path (a ${WARMUP} warm-up before the first, ${REWARM} before each later one); medians of the rounds; gateways run the compiled build (dist/); body ${page.length} bytes (20 pets).`,
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
    'Ratios are computed within each round, then the median is taken:',
    `- gateway hit (Redis) / nginx proxy_cache hit: ${ratio('gateway hit, Redis cache + Redis limiter', 'nginx proxy_cache hit')} (target ≥ 0.5×); p99 ${hitP99?.median.toFixed(2)} ms (rounds ${hitP99?.min.toFixed(2)}–${hitP99?.max.toFixed(2)}; target ≤ 5 ms; bare Node's in the same rounds ${bareP99?.median.toFixed(2)} ms, ${bareP99?.min.toFixed(2)}–${bareP99?.max.toFixed(2)})`,
    `- the machine's own stalls, with every server idle (${STALL_SECONDS} s, one clock-reading spinner per core), before the runs: ${describeStalls(stallsBefore)}; after them: ${describeStalls(stallsAfter)}`,
    `- gateway hit (in-process) / nginx proxy_cache hit: ${ratio('gateway hit, in-process cache', 'nginx proxy_cache hit')}`,
    `- gateway hit (Redis) / bare Node: ${ratio('gateway hit, Redis cache + Redis limiter', 'bare Node http (ceiling)')}; in-process: ${ratio('gateway hit, in-process cache', 'bare Node http (ceiling)')}`,
    `- server CPU per request, gateway hit (Redis) / bare Node: ${ratio('gateway hit, Redis cache + Redis limiter', 'bare Node http (ceiling)', 'cpuUs')}; / nginx proxy_cache hit: ${ratio('gateway hit, Redis cache + Redis limiter', 'nginx proxy_cache hit', 'cpuUs')}`,
    `- gateway miss (Redis) / nginx reverse proxy: ${ratio('gateway miss, Redis', 'nginx reverse proxy (no cache)')}; in-process: ${ratio('gateway miss, in-process', 'nginx reverse proxy (no cache)')} (target ≥ 0.5×)`,
    `- gateway hit (Redis) / plain Express 5: ${ratio('gateway hit, Redis cache + Redis limiter', 'plain Express 5 app, same bytes')}`,
    `- gateway hit overhead at 1 connection, p50: **${hit1?.median.toFixed(3)} ms** above bare Node (rounds ${hit1?.min.toFixed(3)}–${hit1?.max.toFixed(3)}; target ≤ 0.25 ms)`,
    `- gateway resident memory after the run (MB): ${Object.entries(rss).map(([n, v]) => `${n} ${v}`).join(', ')}`,
  ];
  const report = lines.join('\n');
  writeResults(ROOT, 'latest.md', report);
  console.log(report);
}

function cleanup() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => setTimeout(cleanup, 300));
