import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import { createOutageLog } from '../../lib/outage-log';
import { normalisedQueryKey, type CacheLookup, type CachedResponse, type ListCache } from '../cache/list-cache';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { Step } from '../pipeline';

export interface ListCacheOptions {
  cache: ListCache;
  logger: Logger;
  metrics: GatewayMetrics;
  now?: () => number;
  /** How long to wait for another process's fill before going upstream anyway. */
  fillWaitMs?: number;
}

const POLL_MS = 15;

/**
 * Serves `GET /pets` from the list cache and invalidates it on a successful `POST /pets`.
 * Runs after authentication, rate limiting and validation, so a cached body is never served to
 * a request that would have been refused. Concurrent identical misses share one upstream call
 * per process (and across processes through a short Redis lock). When the cache store fails,
 * requests bypass it and keep succeeding.
 */
export function listCache({ cache, logger, metrics, now = Date.now, fillWaitMs = 1000 }: ListCacheOptions): { prefetch: Step; serve: Step } {
  const flights = new Map<string, Promise<CachedResponse | undefined>>();
  const outage = createOutageLog(logger, 'list cache');
  // Creates whose invalidation could not reach the store: retried before the next lookup is trusted.
  const pendingInvalidation = new Set<string>();

  const invalidate = async (environment: string) => {
    for (const flightKey of flights.keys()) if (flightKey.startsWith(`${environment} `)) flights.delete(flightKey);
    try {
      await cache.invalidate(environment);
      pendingInvalidation.delete(environment);
      outage.ok();
    } catch (err) {
      pendingInvalidation.add(environment);
      outage.failed(err);
    }
  };

  const lookup = async (environment: string, key: string) => {
    if (pendingInvalidation.has(environment)) {
      await cache.invalidate(environment);
      pendingInvalidation.delete(environment);
    }
    return cache.lookup(environment, key);
  };

  /**
   * Runs just before the rate limiter: for a list with a valid query, starts the cache read so
   * that it shares the limiter's Redis round trip. Refuses nothing; an invalid query is left
   * for validation to report in its turn.
   */
  const prefetch: Step = function prefetchListCacheStep(req, _res, next) {
    const { ctx } = req;
    const route = ctx.route;
    if (route?.kind === 'operation' && route.operation.operationId === 'listPets' && req.method === 'GET') {
      let query: Record<string, unknown> | undefined;
      try {
        query = route.operation.parseQuery(new URLSearchParams(ctx.search));
      } catch {
        query = undefined;
      }
      if (query) {
        ctx.query = query;
        const key = normalisedQueryKey(query);
        const result = lookup(ctx.environment, key);
        result.catch(() => {}); // awaited (and its failure handled) by the serve step, if the request gets that far
        ctx.cacheLookup = { key, result };
      }
    }
    next();
  };

  const serve: Step = async function listCacheStep(req, res, next) {
    const { ctx } = req;
    const op = ctx.operation;
    if (op?.operationId === 'createPet') {
      ctx.onUpstreamResponse = async (upstream) => {
        if (upstream.status === 201) await invalidate(ctx.environment);
      };
      return next();
    }
    if (op?.operationId !== 'listPets' || req.method !== 'GET') return next();

    const key = normalisedQueryKey(ctx.query ?? {});
    const flightKey = `${ctx.environment} ${key}`;
    const inFlight = flights.get(flightKey);
    if (inFlight) {
      metrics.cacheLookup(ctx.environment, 'coalesced');
      const entry = await inFlight;
      if (entry) return sendCached(res, entry, now());
      res.setHeader('X-Cache', 'MISS'); // the leader's lookup or fetch failed: this one goes upstream itself
      return next();
    }

    let resolveFlight!: (entry: CachedResponse | undefined) => void;
    const flight = new Promise<CachedResponse | undefined>((resolve) => (resolveFlight = resolve));
    flights.set(flightKey, flight);
    const settle = (entry: CachedResponse | undefined) => {
      if (flights.get(flightKey) === flight) flights.delete(flightKey);
      resolveFlight(entry);
    };

    let generation: number;
    let claimed = false;
    const release = () => {
      if (claimed) cache.releaseFill(ctx.environment, key).catch((err: unknown) => outage.failed(err));
      claimed = false;
    };
    const early = ctx.cacheLookup?.key === key ? ctx.cacheLookup.result : undefined;
    try {
      const found = await (early ?? lookup(ctx.environment, key));
      outage.ok();
      if (found.entry) {
        metrics.cacheLookup(ctx.environment, 'hit');
        settle(found.entry);
        return sendCached(res, found.entry, now());
      }
      generation = found.generation;
      if (found.filling || !(await cache.claimFill(ctx.environment, key, generation))) {
        const filled = await waitForFill(() => lookup(ctx.environment, key), generation, fillWaitMs);
        if (filled) {
          metrics.cacheLookup(ctx.environment, 'coalesced');
          settle(filled);
          return sendCached(res, filled, now());
        }
      } else {
        claimed = true;
      }
    } catch (err) {
      outage.failed(err);
      metrics.cacheLookup(ctx.environment, 'bypass');
      settle(undefined);
      res.setHeader('X-Cache', 'MISS');
      return next();
    }

    metrics.cacheLookup(ctx.environment, 'miss');
    res.setHeader('X-Cache', 'MISS');
    res.once('close', () => {
      settle(undefined); // upstream failed or client left: followers go on their own
      release();
    });
    ctx.onUpstreamResponse = async (upstream) => {
      if (upstream.status !== 200) return settle(undefined);
      const link = upstream.headers.link;
      const entry: CachedResponse = {
        storedAt: now(),
        contentType: String(upstream.headers['content-type'] ?? 'application/json'),
        link: Array.isArray(link) ? link.join(', ') : link,
        body: upstream.body,
      };
      settle(entry);
      try {
        await cache.store(ctx.environment, key, generation, entry);
      } catch (err) {
        outage.failed(err);
      }
      release();
    };
    next();
  };

  return { prefetch, serve };
}

/** Polls while another process fills the entry; gives up when it is stored, abandoned, invalidated or late. */
async function waitForFill(read: () => Promise<CacheLookup>, generation: number, waitMs: number) {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const found = await read();
    if (found.entry) return found.entry;
    if (found.generation !== generation || !found.filling) return undefined;
  }
  return undefined;
}

function sendCached(res: ServerResponse, entry: CachedResponse, now: number): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', entry.contentType);
  if (entry.link) res.setHeader('Link', entry.link);
  res.setHeader('X-Cache', 'HIT');
  res.setHeader('Age', String(Math.max(0, Math.floor((now - entry.storedAt) / 1000))));
  res.setHeader('Content-Length', entry.body.length);
  res.end(entry.body);
}
