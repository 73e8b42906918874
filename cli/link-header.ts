/**
 * The target of the `rel="next"` link in a `Link` header (RFC 8288), resolved against the URL the
 * response came from; null when there is none.
 */
export function nextLink(header: string | null, base: URL): URL | null {
  if (!header) return null;
  // Each link is <target> followed by ;-separated parameters; a quoted value may hold , or ;.
  const link = /<([^>]*)>((?:\s*;\s*[^\s;,=]+(?:\s*=\s*(?:"[^"]*"|[^\s;,]*))?)*)/g;
  for (const [, target, params] of header.matchAll(link)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]*))/i.exec(params!);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (rels.includes('next')) {
      try {
        return new URL(target!, base);
      } catch {
        return null;
      }
    }
  }
  return null;
}
