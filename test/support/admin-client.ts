/** An admin token as ADMIN_TOKEN takes it: at least 32 characters. */
export const ADMIN_TOKEN = 'admin-test-token-0123456789abcdefghij';

/** The environment of a gateway whose admin API opens with ADMIN_TOKEN (labelled `admin`). */
export const ADMIN_ENV = { ADMIN_TOKEN } as const;

export interface AdminResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Calls the admin listener as an operator would: a bearer token, JSON both ways. */
export function adminClient(adminUrl: string, token: string = ADMIN_TOKEN) {
  async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminResponse> {
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }
  return {
    send,
    get: (path: string, headers?: Record<string, string>) => send('GET', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => send('POST', path, body, headers),
    put: (path: string, body?: unknown, headers?: Record<string, string>) => send('PUT', path, body, headers),
    delete: (path: string, body?: unknown, headers?: Record<string, string>) => send('DELETE', path, body, headers),
  };
}

export type AdminClient = ReturnType<typeof adminClient>;

/** Where a page's `Link: <…>; rel="next"` leads: its reference resolved against the path asked, as a client resolves it. */
export function nextPagePath(link: string | null, asked: string): string {
  const reference = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
  if (!reference) throw new Error(`no rel="next" link in ${JSON.stringify(link)}`);
  const next = new URL(reference[1]!, new URL(asked, 'http://admin.test'));
  return `${next.pathname}${next.search}`;
}
