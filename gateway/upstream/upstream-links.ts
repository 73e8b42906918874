/**
 * Upstreams speak in their own paths (`/pets/3`, or `/v1/pets/3` for a remote base URL);
 * clients must see the gateway's public prefix. These rewrite `Location` and `Link` headers.
 */
export interface LinkRewriter {
  location(value: string): string;
  link(value: string): string;
}

export function createLinkRewriter(options: { upstreamUrl: string; publicUrl: string; prefix: string }): LinkRewriter {
  const upstream = new URL(options.upstreamUrl);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const toPublicPath = (target: string): string | undefined => {
    let path = target;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
      const url = URL.parse(target);
      if (url?.origin !== upstream.origin) return undefined; // a link elsewhere, or no URL at all, is left alone
      path = url.pathname + url.search;
    }
    if (!path.startsWith('/')) return undefined;
    if (basePath && !(path === basePath || path.startsWith(basePath + '/') || path.startsWith(basePath + '?'))) return undefined;
    return options.prefix + path.slice(basePath.length);
  };
  return {
    location(value) {
      return toPublicPath(value) ?? value;
    },
    link(value) {
      return value.replace(/<([^>]*)>/g, (whole, target: string) => {
        const path = toPublicPath(target);
        return path === undefined ? whole : `<${options.publicUrl}${path}>`;
      });
    },
  };
}
