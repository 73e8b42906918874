/**
 * What may go into the list cache, which replays one upstream answer to every key of an
 * environment: a shared cache in RFC 9111's sense. Decided once, when an entry is filled, so a
 * hit costs nothing more.
 */

/** The only request header the list cache lets an entry vary on: the gateway pins it to identity for every fill (upstream-request-headers.ts). */
const VARY_PINNED_BY_GATEWAY = new Set(['accept-encoding']);

/** Directives that forbid a shared cache to store the answer, or to replay it without asking the upstream again. */
const FORBIDDING_DIRECTIVES = new Set(['private', 'no-store', 'no-cache']);

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * Why a 200 answer to `GET /pets` must not be shared, or undefined when it may be: a content
 * coding other than identity, `private`/`no-store`/`no-cache` or a zero shared lifetime, a
 * `Set-Cookie`, or a `Vary` on anything but the Accept-Encoding the gateway pins. The entry is
 * skipped rather than keyed on Vary: the API's lists do not vary, so an upstream that says they
 * do is answering per client.
 */
export function unshareableReason(headers: Headers): string | undefined {
  const coding = tokens(headers['content-encoding']);
  if (coding.some((c) => c !== 'identity')) return `Content-Encoding: ${coding.join(', ')}`;
  if (headers['set-cookie'] !== undefined) return 'Set-Cookie';
  const cacheControl = cacheControlDirectives(headers['cache-control']);
  for (const directive of cacheControl.keys()) if (FORBIDDING_DIRECTIVES.has(directive)) return `Cache-Control: ${directive}`;
  const sharedMaxAge = cacheControl.get('s-maxage') ?? cacheControl.get('max-age');
  if (sharedMaxAge !== undefined && !(Number(sharedMaxAge) > 0)) return 'Cache-Control: no shared lifetime';
  const vary = tokens(headers.vary).filter((name) => !VARY_PINNED_BY_GATEWAY.has(name));
  if (vary.length) return `Vary: ${vary.join(', ')}`;
  return undefined;
}

/** Lower-case, comma-separated list members of a header that may have been sent several times. */
function tokens(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
}

/** Directive name → argument (unquoted; empty when it has none). */
function cacheControlDirectives(value: string | string[] | undefined): Map<string, string> {
  const directives = new Map<string, string>();
  // Split on commas outside quotes: `private="set-cookie, x-a"` is one directive.
  const parts = (Array.isArray(value) ? value.join(',') : (value ?? '')).match(/(?:[^,"]|"[^"]*")+/g) ?? [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (name && !directives.has(name)) directives.set(name, eq === -1 ? '' : part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
  }
  return directives;
}
