/** "0" … "999", and the same zero-padded to three digits: made once, shared by every call. */
const PLAIN = Array.from({ length: 1000 }, (_, i) => String(i));
const PADDED = PLAIN.map((s) => s.padStart(3, '0'));

/**
 * The decimal text of a non-negative integer, without V8's number-to-string cache.
 *
 * Why: `String(n)` and template literals keep each new number's string in that cache, an
 * old-generation table. A count that changes on every request (the `RateLimit` header's
 * remaining quota) therefore promoted a fresh string per request into the old generation, about
 * 70 KB per scavenge at 20k req/s, and that drove a major GC (with its tens of ms of slow event
 * loop turns) every ten seconds. Strings built here from the fixed tables die young.
 */
export function decimalText(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0 || n >= 1e9) return String(n);
  if (n < 1000) return PLAIN[n]!;
  const low = PADDED[n % 1000]!;
  if (n < 1e6) return PLAIN[Math.floor(n / 1000)]! + low;
  return PLAIN[Math.floor(n / 1e6)]! + PADDED[Math.floor(n / 1000) % 1000]! + low;
}
