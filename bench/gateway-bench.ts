/**
 * Reproducible gateway benchmark: `npm run bench` (needs `wrk`; nginx is used when installed).
 * Everything runs on 127.0.0.1, bounded in time, and stops by itself. Prints a markdown table
 * and writes it to bench/results/latest.md.
 *
 * Paths measured, side by side in one run, all serving the same 20-pet JSON page:
 * - bare Node http serving the bytes from memory (the ceiling)
 * - nginx proxy_cache hit and nginx reverse proxy to the store (the C anchors), when nginx exists
 * - the pet store called directly (the upstream)
 * - the gateway: cache hit and cache miss, with the in-process cache and with Redis
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce, builtEntry, freePort } from './support/processes';
import { requireWrk, runWrk, type WrkResult } from './support/wrk';

const ROOT = join(__dirname, '..');
const DURATION = process.env.BENCH_DURATION ?? '8s';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP = process.env.BENCH_WARMUP ?? '2s';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
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

function wrk(name: string, url: string, headers: Record<string, string> = {}, connections = CONNECTIONS): WrkResult {
  // Steady state, not start-up: V8 compiles the hot path during the first thousands of requests.
  runWrk({ name, url, headers, connections, duration: WARMUP });
  const result = runWrk({ name, url, headers, connections, duration: DURATION });
  console.error(`  ${name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(3)} ms, p99 ${result.p99.toFixed(3)} ms, errors ${result.errors}`);
  return result;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

function startNginx(upstreamPort: number): { cachePort: number; proxyPort: number } | undefined {
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
  return { cachePort, proxyPort };
}

async function main() {
  requireWrk();
  buildOnce();
  console.error(`Benchmark on ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}, ${DURATION} per run, ${CONNECTIONS} connections`);

  // The upstream: a standalone pet store with 20 pets.
  const storePort = await freePort();
  await startNode('petstore/main.ts', { PETSTORE_PORT: String(storePort), DATA_DIR: join(tmp, 'store') }, /listening/);
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
    const port = await freePort();
    const child = await startNode(
      'gateway/main.ts',
      { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(tmp, `gw-${name}`), PRODUCTION_UPSTREAM: store, RATE_LIMIT_PER_MINUTE: '10000000', LOG_LEVEL: 'warn' },
      /ready at/,
    );
    const url = `http://127.0.0.1:${port}`;
    const signup = await fetch(`${url}/portal/api/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `bench-${name}@example.com`, password: 'benchmark passphrase' }) });
    const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
    const { key } = await json(`${url}/portal/api/keys`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: '{"name":"bench"}' });
    gateways[name] = { url, key, pid: child.pid! };
  }

  const results: WrkResult[] = [];
  const nginx = startNginx(storePort);
  await new Promise((r) => setTimeout(r, 500));
  const auth = (g: string) => ({ Authorization: `Bearer ${gateways[g]!.key}` });
  results.push(wrk('bare Node http (ceiling)', `http://127.0.0.1:${barePort}/pets`));
  if (nginx) {
    results.push(wrk('nginx proxy_cache hit', `http://127.0.0.1:${nginx.cachePort}/pets`));
    results.push(wrk('nginx reverse proxy (no cache)', `http://127.0.0.1:${nginx.proxyPort}/pets`));
  }
  results.push(wrk('plain Express 5 app, same bytes', `http://127.0.0.1:${expressPort}/pets`));
  results.push(wrk('pet store called directly', `${store}/pets`));
  results.push(wrk('gateway hit, in-process cache', `${gateways.memory!.url}/v1/pets`, auth('memory')));
  results.push(wrk('gateway hit, Redis cache + Redis limiter', `${gateways.redis!.url}/v1/pets`, auth('redis')));
  results.push(wrk('gateway miss, in-process', `${gateways['memory-miss']!.url}/v1/pets`, auth('memory-miss')));
  results.push(wrk('gateway miss, Redis', `${gateways['redis-miss']!.url}/v1/pets`, auth('redis-miss')));
  const bare1 = wrk('bare Node, 1 connection', `http://127.0.0.1:${barePort}/pets`, {}, 1);
  const hit1 = wrk('gateway hit (Redis), 1 connection', `${gateways.redis!.url}/v1/pets`, auth('redis'), 1);
  results.push(bare1, hit1);
  const rss = Object.fromEntries(Object.entries(gateways).map(([n, g]) => [n, rssMb(g.pid)]));

  const by = (n: string) => results.find((r) => r.name === n);
  const ratio = (a?: WrkResult, b?: WrkResult) => (a && b ? (a.rps / b.rps).toFixed(2) : 'n/a');
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}; wrk -t1 -c${CONNECTIONS} -d${DURATION} after a ${WARMUP} warm-up per path; gateways run the compiled build (dist/); body ${page.length} bytes (20 pets).`,
    '',
    '| path | req/s | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${r.errors} |`),
    '',
    `- gateway hit (Redis) / nginx proxy_cache hit: **${ratio(by('gateway hit, Redis cache + Redis limiter'), by('nginx proxy_cache hit'))}×** (target ≥ 0.5×); p99 ${by('gateway hit, Redis cache + Redis limiter')?.p99.toFixed(2)} ms (target ≤ 5 ms)`,
    `- gateway hit (in-process) / nginx proxy_cache hit: **${ratio(by('gateway hit, in-process cache'), by('nginx proxy_cache hit'))}×**`,
    `- gateway miss (Redis) / nginx reverse proxy: **${ratio(by('gateway miss, Redis'), by('nginx reverse proxy (no cache)'))}×**; in-process: **${ratio(by('gateway miss, in-process'), by('nginx reverse proxy (no cache)'))}×** (target ≥ 0.5×)`,
    `- gateway hit (Redis) / plain Express 5: **${ratio(by('gateway hit, Redis cache + Redis limiter'), by('plain Express 5 app, same bytes'))}×**`,
    `- gateway hit overhead at 1 connection, p50: **${(hit1.p50 - bare1.p50).toFixed(3)} ms** above bare Node (target ≤ 0.25 ms)`,
    `- gateway resident memory after the run (MB): ${Object.entries(rss).map(([n, v]) => `${n} ${v}`).join(', ')}`,
  ];
  const report = lines.join('\n');
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.md'), `${report}\n`);
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
