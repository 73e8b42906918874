/**
 * The `Link` header of a page that has more after it: the same list (its filters kept, `limit`
 * made explicit) from the item after `after`: the admin API's lists and a key's request log alike.
 * `pageUrl` may be a path, or empty for a query alone; the client resolves either against the URL
 * it asked.
 */
export function nextPageLink(pageUrl: string, filters: Record<string, string | number | undefined>, limit: number, after: string | number): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, String(value));
  query.set('limit', String(limit));
  query.set('after', String(after));
  return `<${pageUrl}?${query.toString()}>; rel="next"`;
}
