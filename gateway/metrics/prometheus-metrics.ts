import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { KeyVerifier } from '../../identity/key-verifier';
import type { RequestLogWriterStats } from '../request-log/request-log-writer';
import type { Environment } from '../pipeline/pipeline';
import { EARLY_REFUSAL_CODES, type CacheOutcome, type GatewayMetrics, type RateLimitKind, type UpstreamOutcome } from './gateway-metrics';
import { bucketHistogram, tallyCounter, type HistogramSeries, type Tally } from './hot-path-series';

/** From a cached list (sub-millisecond) to the upstream timeout's order of magnitude. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const CACHE_OUTCOMES: readonly CacheOutcome[] = ['hit', 'miss', 'coalesced', 'bypass'];
const RATE_LIMIT_KINDS: readonly RateLimitKind[] = ['key', 'quota', 'anonymous'];
const UPSTREAM_OUTCOMES: readonly UpstreamOutcome[] = ['2xx', '3xx', '4xx', '5xx', 'refused', 'timeout', 'circuit_open', 'saturated'];

export interface PrometheusMetricsOptions {
  /** Its cache counters are read when scraped, so verifying a key pays nothing for metrics. */
  keyVerifier?: Pick<KeyVerifier, 'stats'>;
  /** Its lost records, read when scraped, so recording pays nothing for metrics. */
  requestLogWriter?: { stats(): RequestLogWriterStats };
  /** Process metrics (memory, CPU, GC, event-loop lag). Default true. */
  defaultMetrics?: boolean;
}

export interface PrometheusMetrics {
  metrics: GatewayMetrics;
  /** This gateway's own registry: two gateways in one process never share series. */
  registry: Registry;
}

interface RouteSeries {
  latency: HistogramSeries;
  byStatus: Map<number, Tally>;
}

export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = new Registry();

  const requests = tallyCounter(registry, {
    name: 'asg_http_requests_total',
    help: 'API responses, by environment, route (operationId or "unmatched") and status.',
    labelNames: ['environment', 'route', 'status'],
  });
  const requestDuration = bucketHistogram(registry, {
    name: 'asg_http_request_duration_seconds',
    help: 'API response time in the gateway, from the request reaching its pipeline to the last byte written.',
    labelNames: ['environment', 'route'],
    buckets: LATENCY_BUCKETS,
  });
  const cacheLookups = tallyCounter(registry, {
    name: 'asg_cache_lookups_total',
    help: 'List cache lookups, by environment and outcome (hit, miss, coalesced, bypass).',
    labelNames: ['environment', 'outcome'],
  });
  const rateLimited = tallyCounter(registry, {
    name: 'asg_rate_limited_total',
    help: 'Requests refused with 429, by budget (key: the per-minute budget of the key\'s account; quota: its monthly quota; anonymous).',
    labelNames: ['kind'],
  });
  const upstreamRequests = tallyCounter(registry, {
    name: 'asg_upstream_requests_total',
    help: 'Calls to the upstream, by environment and outcome (status class, refused, timeout, circuit_open, saturated: sockets and queue full).',
    labelNames: ['environment', 'outcome'],
  });
  const upstreamDuration = bucketHistogram(registry, {
    name: 'asg_upstream_request_duration_seconds',
    help: 'Upstream call time, until its whole answer or its failure.',
    labelNames: ['environment'],
    buckets: LATENCY_BUCKETS,
  });
  const refusedEarly = tallyCounter(registry, {
    name: 'asg_refused_before_routing_total',
    help: 'Requests refused before any route saw them (malformed HTTP, headers too large, too slow, CONNECT, an unknown Expect, no Host), by Error code.',
    labelNames: ['code'],
  });
  const { keyVerifier, requestLogWriter } = options;
  if (keyVerifier) {
    scrapedCounter(registry, {
      name: 'asg_key_cache_lookups_total',
      help: 'API key verifications answered from the in-process key cache (hit) or by the store (miss).',
      labelName: 'outcome',
      read: () => {
        const { hits, misses } = keyVerifier.stats();
        return { hit: hits, miss: misses };
      },
    });
    new Gauge({
      name: 'asg_key_cache_entries',
      help: 'Keys (known and unknown) held in the in-process key cache.',
      registers: [registry],
      collect() {
        this.set(keyVerifier.stats().size);
      },
    });
  }
  if (requestLogWriter) {
    scrapedCounter(registry, {
      name: 'asg_request_log_dropped_total',
      help: 'Request log records lost: its buffer was full (buffer_full) or the store failed to take a batch (store_failed). Requests are never affected.',
      labelName: 'reason',
      read: () => {
        const { droppedBufferFull, droppedStoreFailed } = requestLogWriter.stats();
        return { buffer_full: droppedBufferFull, store_failed: droppedStoreFailed };
      },
    });
  }

  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'asg_' });

  // Closed label sets are bound up front, so they are exposed at 0 from the first scrape.
  const cacheTallies = byEnvironment((environment) => bindAll(CACHE_OUTCOMES, (outcome) => cacheLookups({ environment, outcome })));
  const rateLimitedTallies = bindAll(RATE_LIMIT_KINDS, (kind) => rateLimited({ kind }));
  const upstreamTallies = byEnvironment((environment) => bindAll(UPSTREAM_OUTCOMES, (outcome) => upstreamRequests({ environment, outcome })));
  const upstreamLatency = byEnvironment((environment) => upstreamDuration({ environment }));
  const refusedEarlyTallies = bindAll(EARLY_REFUSAL_CODES, (code) => refusedEarly({ code }));
  // Routes and statuses are open sets, bounded in practice by the OpenAPI document: bound on first use.
  const routes = byEnvironment(() => new Map<string, RouteSeries>());

  const metrics: GatewayMetrics = {
    requestFinished(environment, route, status, seconds) {
      const byRoute = routes[environment];
      let series = byRoute.get(route);
      if (!series) {
        series = { latency: requestDuration({ environment, route }), byStatus: new Map() };
        byRoute.set(route, series);
      }
      let tally = series.byStatus.get(status);
      if (!tally) {
        tally = requests({ environment, route, status: String(status) });
        series.byStatus.set(status, tally);
      }
      tally.n++;
      series.latency.observe(seconds);
    },
    cacheLookup(environment, outcome) {
      cacheTallies[environment][outcome].n++;
    },
    rateLimited(kind) {
      rateLimitedTallies[kind].n++;
    },
    upstreamFinished(environment, outcome, seconds) {
      upstreamTallies[environment][outcome].n++;
      upstreamLatency[environment].observe(seconds);
    },
    refusedEarly(code) {
      refusedEarlyTallies[code].n++;
    },
  };
  return { metrics, registry };
}

/** A counter whose values a component keeps as plain numbers, copied in when scraped. */
function scrapedCounter(registry: Registry, o: { name: string; help: string; labelName: string; read: () => Record<string, number> }): void {
  new Counter({
    name: o.name,
    help: o.help,
    labelNames: [o.labelName],
    registers: [registry],
    collect() {
      const counts = o.read();
      this.reset();
      for (const [label, count] of Object.entries(counts)) this.labels(label).inc(count);
    },
  });
}

function byEnvironment<T>(build: (environment: Environment) => T): Record<Environment, T> {
  return { production: build('production'), staging: build('staging') };
}

function bindAll<K extends string, T>(keys: readonly K[], bind: (key: K) => T): Record<K, T> {
  const bound = {} as Record<K, T>;
  for (const key of keys) bound[key] = bind(key);
  return bound;
}
