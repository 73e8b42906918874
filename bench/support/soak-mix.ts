import type { PacedRequest } from './paced-client';

type Response = Parameters<PacedRequest['check']>[0];

/** Share of the traffic (per cent) per class; the over-limit key's share also sets the quota. */
export const SOAK_MIX = {
  'cached list': 67,
  create: 5,
  'deprecated get': 10,
  'staging list': 12,
  'bad key': 2,
  'over-limit key': 4,
} as const;

export type SoakKind = keyof typeof SOAK_MIX;

/**
 * Budgets for a rate. An account's keys share its per-minute budget in each environment, so the
 * over-limit key has an account of its own, on a plan whose budget it sends twice of: about half
 * of its requests in each minute are refused. The other keys, as many as if each had that small
 * budget, belong to one account whose budget (RATE_LIMIT_PER_MINUTE) is twice what it sends in
 * either environment, so none of theirs is.
 */
export function soakBudget(rate: number) {
  const share = (kind: SoakKind) => (rate * SOAK_MIX[kind]) / 100;
  const quotaPerMinute = Math.max(10, Math.floor((share('over-limit key') * 60) / 2));
  const perKeyRate = quotaPerMinute / 60 / 2;
  const production = share('cached list') + share('create') + share('deprecated get');
  return {
    quotaPerMinute,
    steadyQuotaPerMinute: Math.ceil(Math.max(production, share('staging list')) * 60 * 2),
    productionKeys: Math.ceil(production / perKeyRate),
    stagingKeys: Math.ceil(share('staging list') / perKeyRate),
  };
}

/** Smooth weighted round-robin: the classes interleave evenly instead of coming in runs. */
function interleave<K extends string>(weights: Record<K, number>): () => K {
  const kinds = Object.keys(weights) as K[];
  const total = kinds.reduce((n, k) => n + weights[k], 0);
  const current = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<K, number>;
  return () => {
    let best = kinds[0]!;
    for (const k of kinds) {
      current[k] += weights[k];
      if (current[k] > current[best]) best = k;
    }
    current[best] -= total;
    return best;
  };
}

const cycle = <T>(items: readonly T[]) => {
  let i = 0;
  return () => items[i++ % items.length]!;
};

function errorBody(res: Response, status: number, code: string): string | undefined {
  if (res.status !== status) return `${res.status} (expected ${status}): ${res.body.slice(0, 200)}`;
  try {
    const body = JSON.parse(res.body) as { code?: unknown; status?: unknown };
    return body.code === code && body.status === status ? undefined : `${status} with body ${res.body.slice(0, 200)}`;
  } catch {
    return `${status} with a body that is not JSON`;
  }
}

const jsonArray = (res: Response) => (res.status === 200 && res.body.startsWith('[') ? undefined : `${res.status} (expected 200): ${res.body.slice(0, 200)}`);

export interface SoakKeys {
  production: string[];
  staging: string[];
  overLimit: string;
  /** Existing production pet ids, for the deprecated single-pet read. */
  petIds: number[];
}

/** The request generator: which class next, with which key, path and expectation. */
export function soakTraffic(keys: SoakKeys): () => PacedRequest {
  const nextKind = interleave<SoakKind>(SOAK_MIX);
  const productionKey = cycle(keys.production);
  const stagingKey = cycle(keys.staging);
  const petId = cycle(keys.petIds);
  // Several query variants, each its own cache entry; creates invalidate them as they would in use.
  const listPath = cycle(['/v1/pets', '/v1/pets?limit=5', '/v1/pets?limit=20', '/v1/pets?status=available', '/v1/pets?status=pending&limit=10', '/v1/pets?limit=10&after=5']);
  const stagingPath = cycle(['/staging/v1/pets', '/staging/v1/pets?limit=5&status=available']);
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const unknownKey = `asg_prod_${'x'.repeat(40)}`;
  let created = 0;

  return () => {
    const kind = nextKind();
    switch (kind) {
      case 'cached list':
        return { kind, method: 'GET', path: listPath(), headers: bearer(productionKey()), check: jsonArray };
      case 'create':
        created++;
        return {
          kind,
          method: 'POST',
          path: '/v1/pets',
          headers: bearer(productionKey()),
          body: JSON.stringify({ name: `Soak pet ${created}`, categoryId: 1 + (created % 5) }),
          check: (res) => (res.status === 201 && res.headers.location ? undefined : `${res.status} (expected 201 with Location): ${res.body.slice(0, 200)}`),
        };
      case 'deprecated get':
        return {
          kind,
          method: 'GET',
          path: `/v1/pets/${petId()}`,
          headers: bearer(productionKey()),
          check: (res) => (res.status === 200 && res.headers.deprecation && res.headers.sunset ? undefined : `${res.status} (expected 200 with Deprecation and Sunset)`),
        };
      case 'staging list':
        return { kind, method: 'GET', path: stagingPath(), headers: bearer(stagingKey()), check: jsonArray };
      case 'bad key':
        return { kind, method: 'GET', path: '/v1/pets', headers: bearer(unknownKey), check: (res) => errorBody(res, 401, 'unauthorized') };
      case 'over-limit key':
        return {
          kind,
          method: 'GET',
          path: '/v1/pets?limit=5',
          headers: bearer(keys.overLimit),
          check: (res) => (res.status === 200 ? jsonArray(res) : errorBody(res, 429, 'rate_limited') ?? (res.headers['retry-after'] ? undefined : '429 without Retry-After')),
        };
    }
  };
}
