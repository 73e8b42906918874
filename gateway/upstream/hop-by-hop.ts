/**
 * Headers that concern one connection only (RFC 9110 §7.6.1, with the keep-alive and
 * proxy-connection of older clients): a proxy passes them on in neither direction.
 */
export const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'] as const;

// Nearly every message sends one of these: parsed once, not split and lower-cased per message.
const KEEP_ALIVE: ReadonlySet<string> = new Set(['keep-alive']);
const CLOSE: ReadonlySet<string> = new Set(['close']);

/** The headers a message's own `Connection` header names, which are hop-by-hop too; undefined without one. */
export function connectionTokens(value: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  if (value === 'keep-alive') return KEEP_ALIVE;
  if (value === 'close') return CLOSE;
  return new Set((Array.isArray(value) ? value.join(',') : value).split(',').map((token) => token.trim().toLowerCase()));
}
