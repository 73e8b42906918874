import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import { createOutageLog } from '../cache/outage-log';
import { normalisedQueryKey, type CacheLookup, type CachedResponse, type ListCache } from '../cache/list-cache';
import { unshareableReason } from '../cache/shareable-response';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { ApiOperation } from '../../openapi/operations';
import type { CacheStatus, GatewayRequest, Next, RequestContext, Step } from '../pipeline/pipeline';
import type { SendAtTurnEnd } from '../pipeline/turn-end-writer';

export interface ListCacheOptions {
  cache: ListCache;
  logger: Logger;
  metrics: GatewayMetrics;
  now?: () => number;
  /** How hits are written: batched at the end of the event-loop turn (see turn-end-writer.ts). */
  send: SendAtTurnEnd;
  /** How long to wait for another process's fill before going upstream anyway. */
  fillWaitMs?: number;
}

const POLL_MS = 15;
const ignore = () => {};
/** How long a list whose answer was not shareable goes straight upstream, its requests not waiting for one another's fill. */
const PASS_MS = 10_000;
/** Lists remembered as not shareable; past this the memory starts afresh. */
const MAX_PASSES = 1000;

/**
 * Serves the operation marked `x-cache: list` in the OpenAPI document (`GET /pets`) from the list
 * cache, and invalidates it on a successful call of one marked `x-cache-invalidates` (`POST /pets`).
 * Runs after authentication, rate limiting and validation, so a cached body is never served to
 * a request that would have been refused. Concurrent identical misses share one upstream call
 * per process (and across processes through a short Redis lock). When the cache store fails,
 * requests bypass it and keep succeeding.
 */
export function listCache({ cache, logger, metrics, now = Date.now, send, fillWaitMs = 1000 }: ListCacheOptions): { prefetch: Step; serve: Step } {
  const flights = new Map<string, Promise<CachedResponse | undefined>>();
  // Lists whose last answer was meant for its client only, and until when they skip the fill.
  const passes = new Map<string, number>();
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

  /** The cache's answer, at once or as a promise; a store that throws at once gives a rejected promise, so callers handle one kind of failure. */
  const lookup = (environment: string, key: string): CacheLookup | Promise<CacheLookup> => {
    try {
      if (!pendingInvalidation.has(environment)) return cache.lookup(environment, key);
    } catch (err) {
      return Promise.reject(err);
    }
    return cache.invalidate(environment).then(() => {
      pendingInvalidation.delete(environment);
      return cache.lookup(environment, key);
    });
  };

  // The operation hands each repeated query string's parse back as the same frozen object: its cache key is made once.
  const keys = new WeakMap<Readonly<Record<string, unknown>>, string>();
  const cacheKeyOf = (query: Readonly<Record<string, unknown>>): string => {
    let key = keys.get(query);
    if (key === undefined) keys.set(query, (key = normalisedQueryKey(query)));
    return key;
  };
  const validQuery = (operation: ApiOperation, search: string) => {
    try {
      return operation.parseSearch(search);
    } catch {
      return undefined; // invalid: validation reports it in its turn
    }
  };

  // The last lookup given a rejection guard: the requests of a turn usually share one.
  let guarded: Promise<CacheLookup> | undefined;

  /**
   * Runs just before the rate limiter: for a list with a valid query, starts the cache read so
   * that it overlaps the limiter's round trip, when the limiter needs one. Refuses nothing; an
   * invalid query is left for validation to report in its turn.
   */
  const prefetch: Step = function prefetchListCacheStep(req, _res, next) {
    const { ctx } = req;
    const route = ctx.route;
    if (route?.kind === 'operation' && route.operation.cache === 'list' && req.method === 'GET') {
      const query = validQuery(route.operation, ctx.search);
      if (query) {
        const key = cacheKeyOf(query);
        ctx.query = query;
        const result = lookup(ctx.environment, key);
        // Awaited (and its failure handled) by the serve step, if the request gets that far.
        if (result instanceof Promise && result !== guarded) {
          guarded = result;
          result.catch(ignore);
        }
        ctx.cacheLookup = { key, result };
      }
    }
    next();
  };

  const bypass = (req: GatewayRequest, res: ServerResponse, next: Next, err: unknown) => {
    outage.failed(err);
    metrics.cacheLookup(req.ctx.environment, 'bypass');
    tellCache(req.ctx, 'MISS');
    next();
  };

  /** A hit is sent at once; a miss fetches the entry once per process (and across processes through the fill lock). */
  const answer = (req: GatewayRequest, res: ServerResponse, next: Next, key: string, found: CacheLookup): void | Promise<void> => {
    outage.ok();
    if (!found.entry) return fill(req, res, next, key, found);
    metrics.cacheLookup(req.ctx.environment, 'hit');
    sendCached(send, req, res, found.entry, now());
  };

  const fill = async (req: GatewayRequest, res: ServerResponse, next: Next, key: string, found: CacheLookup): Promise<void> => {
    const { ctx } = req;
    const flightKey = `${ctx.environment} ${key}`;
    const passUntil = passes.get(flightKey);
    if (passUntil !== undefined) {
      if (now() < passUntil) {
        metrics.cacheLookup(ctx.environment, 'miss');
        tellCache(ctx, 'MISS');
        return next();
      }
      passes.delete(flightKey);
    }
    const inFlight = flights.get(flightKey);
    if (inFlight) {
      metrics.cacheLookup(ctx.environment, 'coalesced');
      const entry = await inFlight;
      if (entry) return sendCached(send, req, res, entry, now());
      tellCache(ctx, 'MISS'); // the leader's fetch failed: this one goes upstream itself
      return next();
    }

    let resolveFlight!: (entry: CachedResponse | undefined) => void;
    const flight = new Promise<CachedResponse | undefined>((resolve) => (resolveFlight = resolve));
    flights.set(flightKey, flight);
    const settle = (entry: CachedResponse | undefined) => {
      if (flights.get(flightKey) === flight) flights.delete(flightKey);
      resolveFlight(entry);
    };

    const { generation } = found;
    let claimed = false;
    const release = () => {
      if (claimed) cache.releaseFill(ctx.environment, key).catch((err: unknown) => outage.failed(err));
      claimed = false;
    };
    try {
      let ready: CachedResponse | undefined;
      if (found.filling || !(await cache.claimFill(ctx.environment, key, generation))) {
        ready = await waitForFill(() => lookup(ctx.environment, key), generation, fillWaitMs);
      } else {
        claimed = true;
        // The miss may be older than the last fill: a lookup made before the rate limiter, or one
        // answered after another leader stored the entry and released the lock. Read under the lock.
        ready = (await lookup(ctx.environment, key)).entry;
      }
      if (ready) {
        // Another process's fill (waited for) is a coalesced request; an entry already stored is a hit.
        metrics.cacheLookup(ctx.environment, claimed ? 'hit' : 'coalesced');
        release();
        settle(ready);
        return sendCached(send, req, res, ready, now());
      }
    } catch (err) {
      release();
      settle(undefined);
      return bypass(req, res, next, err);
    }

    metrics.cacheLookup(ctx.environment, 'miss');
    tellCache(ctx, 'MISS');
    res.once('close', () => {
      settle(undefined); // upstream failed or client left: followers go on their own
      release();
    });
    // What is stored is replayed to every key: it is asked for as no one in particular, and as its
    // key says, not as its client spelled it (`?limit=1%30` fills `limit=10`'s entry; docs/security.md).
    ctx.sharedFill = true;
    ctx.upstreamSearch = key === '' ? '' : `?${key}`;
    ctx.onUpstreamResponse = async (upstream) => {
      const unshareable = upstream.status === 200 ? unshareableReason(upstream.received) : `status ${upstream.status}`;
      if (unshareable) {
        logger.debug({ requestId: ctx.requestId, reason: unshareable }, 'list answer not cached');
        if (upstream.status === 200) {
          if (passes.size >= MAX_PASSES) passes.clear();
          passes.set(flightKey, now() + PASS_MS);
        }
        // Waiters here and in other processes ask the upstream themselves, now rather than when this response ends.
        settle(undefined);
        return release();
      }
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

  const serve: Step = function listCacheStep(req, res, next) {
    const { ctx } = req;
    const op = ctx.operation;
    if (op?.invalidatesCache.length) {
      ctx.onUpstreamResponse = async (upstream) => {
        if (upstream.status >= 200 && upstream.status < 300) await invalidate(ctx.environment);
      };
      return next();
    }
    if (op?.cache !== 'list' || req.method !== 'GET') return next();

    const early = ctx.cacheLookup;
    const key = early?.key ?? (ctx.query ? cacheKeyOf(ctx.query) : '');
    const found = early ? early.result : lookup(ctx.environment, key);
    if (!(found instanceof Promise)) return answer(req, res, next, key, found);
    return found.then(
      (result) => answer(req, res, next, key, result),
      (err: unknown) => bypass(req, res, next, err),
    );
  };

  return { prefetch, serve };
}

/** Polls while another process fills the entry; gives up when it is stored, abandoned, invalidated or late. */
async function waitForFill(read: () => CacheLookup | Promise<CacheLookup>, generation: number, waitMs: number) {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const found = await read();
    if (found.entry) return found.entry;
    if (found.generation !== generation || !found.filling) return undefined;
  }
  return undefined;
}

function sendCached(send: SendAtTurnEnd, req: GatewayRequest, res: ServerResponse, entry: CachedResponse, now: number): void {
  const { headers } = req.ctx;
  headers.set('Content-Type', entry.contentType);
  if (entry.link) headers.set('Link', entry.link);
  tellCache(req.ctx, 'HIT');
  headers.set('Age', Math.max(0, Math.floor((now - entry.storedAt) / 1000)));
  headers.set('Content-Length', entry.body.length);
  send(res, 200, headers, entry.body);
}

/** How the cache answered, told to the client (`X-Cache`) and to the request log. */
function tellCache(ctx: RequestContext, verdict: CacheStatus): void {
  ctx.cacheStatus = verdict;
  ctx.headers.set('X-Cache', verdict);
}
