/**
 * Instructions per request: `npm run bench:instructions` (needs valgrind; Redis and PostgreSQL on
 * 127.0.0.1 for the Redis hit). Writes bench/results/local/instructions.md (untracked), or
 * bench/results/instructions.md with BENCH_RECORD=1.
 *
 * `npm run bench`'s CPU time per request moves by a third from round to round on a busy VM; the
 * instructions a server's main thread executes for a request hardly move. Each server runs under
 * valgrind's callgrind with counting off, answers BENCH_INSN_WARMUP requests (V8 has compiled most
 * of the hot path by then), and its main thread's instructions are counted over the next
 * BENCH_INSN_REQUESTS, sent over the same 8 keep-alive connections. Helper threads (V8's compiler
 * and GC, libuv's pool) are left out: their work follows timing, not requests. The gateway
 * scavenges on its main thread alone (its Node flags), bare Node partly on helpers: the ratio
 * leans a little against the gateway.
 *
 * What the count does not see: time in the kernel (reading and writing sockets, most of bare
 * Node's CPU on these VMs), and the cost of an instruction (a cache miss is one instruction). Under
 * callgrind a server answers a hundred or so times fewer requests a second (it prints the rate),
 * so a timer's work per second weighs that many times more. Use it to compare builds of the same
 * path, and the gateway with its floor; `npm run bench` says what it costs in time.
 *
 * Paths: bare Node serving the 20-pet page (the hit ceiling), the same with a hit's seven
 * headers, the gateway's in-process hit and its Redis hit; and the miss to a fast upstream (bare
 * Node serving the page, not itself counted): the bare Node proxy (the miss floor),
 * http-proxy-middleware alone, and the gateway's in-process and Redis misses. Each is started
 * BENCH_INSN_REPEATS times, and compared with its floor: a hit with bare Node, a miss with the
 * bare proxy.
 *
 * Settings: BENCH_INSN_WARMUP (20000), BENCH_INSN_REQUESTS (10000), BENCH_INSN_REPEATS (2),
 * BENCH_ONLY (every path), BENCH_REDIS_URL (redis://127.0.0.1:6379/0), BENCH_POSTGRES_URL
 * (postgres://postgres@127.0.0.1:5432/postgres), BENCH_RECORD (unset). Method and results:
 * docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallgrind, requireValgrind } from './support/callgrind';
import { keepAliveLoad } from './support/keep-alive-load';
import { machineDescription, today } from './support/machine';
import { issueKey, signUp } from './support/portal-keys';
import { createBenchDatabase, POSTGRES_ADMIN_URL, type BenchDatabase } from './support/postgres-database';
import { buildOnce, builtEntry, freePort, startGateway, startNodeProcess, type NodeProcess } from './support/processes';
import { deleteRedisKeys } from './support/redis-keys';
import { bareProxyScript, bytesServerScript, HIT_HEADERS, middlewareProxyScript } from './support/reference-servers';
import { readBenchArguments } from './support/bench-arguments';
import { writeResults } from './support/results-file';

readBenchArguments(__filename);

const ROOT = join(__dirname, '..');
const WARMUP = positiveInteger('BENCH_INSN_WARMUP', 20_000);
const REQUESTS = positiveInteger('BENCH_INSN_REQUESTS', 10_000);
const REPEATS = positiveInteger('BENCH_INSN_REPEATS', 2);
const CONNECTIONS = 8;
/** A keep-alive timeout no callgrind stall reaches: a new connection in the count would count its set-up. */
const KEEP_ALIVE_MS = 600_000;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : undefined;
const REDIS_KEY_PREFIX = `asginsn:${process.pid}:`;
/** Starting under callgrind (the embedded PGlite's WebAssembly above all) takes minutes, not seconds. */
const START_TIMEOUT_MS = 600_000;

/** One environment for the servers and callgrind_control, which finds a server's pipes by the user and host names in it. */
const ENV: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), HOST: '127.0.0.1' };

interface Server {
  process: NodeProcess;
  url: string;
  headers: Record<string, string>;
}

interface InstructionPath {
  name: string;
  start(wrap: readonly string[]): Promise<Server>;
  /** Instructions a request, one per run. */
  counts: number[];
  /** What the path is compared with: bare Node for a hit, the bare proxy for a miss. */
  floor?: InstructionPath;
}

const stops: Array<() => Promise<unknown>> = [];
const started: NodeProcess[] = [];
// However the bench ends (an error, a closed stdout), no server it started outlives it.
process.once('exit', () => {
  for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer; got ${process.env[name]}`);
  return value;
}

async function stopAll() {
  for (const stop of stops.splice(0).reverse()) await stop().catch((err: unknown) => console.error(`cleanup: ${(err as Error).message}`));
}

async function main() {
  requireValgrind();
  buildOnce();
  const tmp = mkdtempSync(join(tmpdir(), 'asg-insn-'));
  stops.push(async () => rmSync(tmp, { recursive: true, force: true }));

  // The upstream of a gateway's first (and only) miss: the pet store with 20 pets, at full speed.
  const storePort = await freePort();
  const store = await startNodeProcess({
    name: 'pet store',
    args: [builtEntry('petstore/main.ts')],
    env: { ...ENV, PETSTORE_PORT: String(storePort), DATA_DIR: join(tmp, 'store') },
    ready: /listening/,
  });
  started.push(store);
  stops.push(store.stop);
  const storeUrl = `http://127.0.0.1:${storePort}`;
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${storeUrl}/pets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `Pet number ${i}`, categoryId: 1 + (i % 5) }) });
    if (res.status !== 201) throw new Error(`seeding the store: ${res.status} ${await res.text()}`);
  }
  const page = Buffer.from(await (await fetch(`${storeUrl}/pets`)).arrayBuffer());

  // Bare Node serving the page: the hit's ceiling, and (at full speed, not counted) the upstream of every miss.
  const pageServer = (port: number, headers?: readonly string[]) => bytesServerScript(page, port, headers, KEEP_ALIVE_MS);
  const fastPort = await freePort();
  const fast = await startNodeProcess({ name: 'fast upstream', args: ['-e', pageServer(fastPort)], env: ENV, ready: /^listening$/m });
  started.push(fast);
  stops.push(fast.stop);
  const fastUrl = `http://127.0.0.1:${fastPort}`;

  let database: BenchDatabase | undefined;
  const reference = (script: (port: number) => string) => async (wrap: readonly string[]): Promise<Server> => {
    const port = await freePort();
    // With Node's own flags, as `npm run bench` runs it. Ready is the script's own line, not valgrind's echo of the command.
    const server = await startNodeProcess({ name: 'reference server', args: ['-e', script(port)], env: ENV, ready: /^listening$/m, wrap, timeoutMs: START_TIMEOUT_MS });
    started.push(server);
    return { process: server, url: `http://127.0.0.1:${port}/pets`, headers: {} };
  };
  let runs = 0;
  const gateway = (store: 'in-process' | 'redis', answer: 'hit' | 'miss') => async (wrap: readonly string[]): Promise<Server> => {
    const run = runs++;
    // A hit: a day's cache, so every counted request is a hit, none a refill. A miss: no cache, the fast upstream.
    const env: Record<string, string> = {
      ...ENV,
      PRODUCTION_UPSTREAM: answer === 'miss' ? fastUrl : storeUrl,
      DATA_DIR: join(tmp, `gateway-${run}`),
      RATE_LIMIT_PER_MINUTE: '10000000',
      CACHE_TTL_SECONDS: answer === 'miss' ? '0' : '86400',
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
    };
    if (store === 'redis') {
      if (!database) {
        database = await createBenchDatabase(`asg_bench_insn_${process.pid}`);
        if (!database) throw new Error(`PostgreSQL does not answer at ${POSTGRES_ADMIN_URL}: the Redis paths run on PostgreSQL, as a deployment does`);
        stops.push(() => deleteRedisKeys(REDIS_URL, REDIS_KEY_PREFIX));
      }
      Object.assign(env, database.env, { REDIS_URL, REDIS_KEY_PREFIX: `${REDIS_KEY_PREFIX}${run}:` });
    }
    const gw = await startGateway(env, START_TIMEOUT_MS, { wrap });
    started.push(gw);
    try {
      const key = await issueKey(gw.url, await signUp(gw.url, `insn-${run}@example.com`), 'insn');
      return { process: gw, url: `${gw.url}/v1/pets`, headers: { Authorization: `Bearer ${key}` } };
    } catch (err) {
      await gw.stop();
      throw err;
    }
  };
  stops.push(async () => database?.drop());

  const ceiling: InstructionPath = { name: 'bare Node http (ceiling)', start: reference(pageServer), counts: [] };
  const bareProxy: InstructionPath = { name: 'bare Node proxy, fast upstream (miss floor)', start: reference((port) => bareProxyScript(fastPort, port, KEEP_ALIVE_MS)), counts: [] };
  const paths: InstructionPath[] = [
    ceiling,
    { name: "bare Node http, a hit's headers", start: reference((port) => pageServer(port, HIT_HEADERS)), counts: [], floor: ceiling },
    { name: 'gateway hit, in-process cache', start: gateway('in-process', 'hit'), counts: [], floor: ceiling },
    { name: 'gateway hit, Redis cache + Redis limiter', start: gateway('redis', 'hit'), counts: [], floor: ceiling },
    bareProxy,
    { name: 'http-proxy-middleware alone, fast upstream', start: reference((port) => middlewareProxyScript(fastPort, port, KEEP_ALIVE_MS)), counts: [], floor: bareProxy },
    { name: 'gateway miss, fast upstream, in-process', start: gateway('in-process', 'miss'), counts: [], floor: bareProxy },
    { name: 'gateway miss, fast upstream, Redis limiter', start: gateway('redis', 'miss'), counts: [], floor: bareProxy },
  ].filter((path) => !ONLY || ONLY.test(path.name));

  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    console.error(`repeat ${repeat} of ${REPEATS}`);
    for (const path of paths) {
      const dir = mkdtempSync(join(tmp, 'callgrind-'));
      const callgrind = createCallgrind(dir, ENV);
      const server = await path.start(callgrind.prefix);
      const load = keepAliveLoad(server.url, server.headers, CONNECTIONS);
      try {
        await load.send(WARMUP);
        const connections = load.connectionsOpened();
        const startedAt = performance.now();
        const perRequest = (await callgrind.count(server.process.pid, () => load.send(REQUESTS))) / REQUESTS;
        const rate = REQUESTS / ((performance.now() - startedAt) / 1000);
        if (load.connectionsOpened() !== connections) throw new Error(`${path.name}: a connection was opened during the count, which counts its set-up too`);
        if (perRequest < 1000) throw new Error(`${path.name}: ${perRequest} instructions a request: counting did not run`);
        path.counts.push(perRequest);
        console.error(`  ${path.name}: ${Math.round(perRequest)} instructions a request (main thread), ${rate.toFixed(0)} req/s under callgrind`);
      } finally {
        load.close();
        await server.process.stop();
      }
    }
  }

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const rows = paths.map((path) => {
    const floor = path.floor ?? path;
    const ratio = floor.counts.length ? `${(mean(path.counts) / mean(floor.counts)).toFixed(2)}× ${floor === ceiling ? 'bare Node' : 'the bare proxy'}` : 'n/a';
    return `| ${path.name} | ${Math.round(mean(path.counts))} | ${path.counts.map((v) => Math.round(v)).join(', ')} | ${ratio} |`;
  });
  const report = [
    `Measured ${today()} on ${machineDescription()}; valgrind's callgrind, main thread only; ${WARMUP} requests of warm-up, then ${REQUESTS} counted, over ${CONNECTIONS} keep-alive connections; ${REPEATS} run${REPEATS === 1 ? '' : 's'} per path, each a fresh process; gateways run the compiled build (dist/), the Redis one on PostgreSQL; body ${page.length} bytes (20 pets).`,
    '',
    '| path | instructions per request (mean) | each run | / its floor |',
    '|---|---:|---|---:|',
    ...rows,
  ].join('\n');
  console.log(report);
  writeResults(ROOT, 'instructions.md', report);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(stopAll);
