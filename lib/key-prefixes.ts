/**
 * The API keys' prefixes, one per environment. In lib/ because lib/request-id.ts, which may import
 * nothing else of the project, must refuse the same prefixes that identity/ issues keys with.
 */
export const KEY_PREFIXES = Object.freeze({ production: 'asg_prod_', staging: 'asg_stag_' } as const);

/** Any key prefix, in any case, anywhere in a text: what may be (part of) a key. */
export const HOLDS_KEY_PREFIX = new RegExp(Object.values(KEY_PREFIXES).join('|'), 'i');
