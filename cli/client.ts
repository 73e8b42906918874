import { AdminApiError, CliError } from './errors';
import { nextLink } from './link-header';
import type { CliSettings } from './settings';

/** The admin API's largest page. */
const MAX_PAGE = 100;

export type Query = Readonly<Record<string, string | number | undefined>>;

export interface ListResult<T> {
  items: T[];
  /** The API had more than `limit` items. */
  more: boolean;
}

/** The admin API over HTTP: bearer token, Error bodies turned into AdminApiError, lists followed page by page. */
export interface AdminClient {
  get<T>(path: string, query?: Query): Promise<T>;
  /** A write; resolves to undefined for a 204. */
  send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** Every item of a paginated list, following `Link: rel="next"`, until there are `limit`. */
  list<T>(path: string, query: Query, limit: number): Promise<ListResult<T>>;
}

export interface AdminClientOptions extends CliSettings {
  fetch?: typeof fetch;
  timeoutMs?: number;
}

interface Answer {
  body: unknown;
  headers: Headers;
}

export function createAdminClient({ adminUrl, token, fetch: fetchImpl = fetch, timeoutMs = 30_000 }: AdminClientOptions): AdminClient {
  const urlOf = (path: string, query: Query = {}) => {
    const url = new URL(path.replace(/^\//, ''), adminUrl);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url;
  };

  async function request(method: string, url: URL, body?: unknown): Promise<Answer> {
    let res: Response;
    try {
      res = await fetchImpl(url, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        // The admin API never redirects; following one could carry the token somewhere else.
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw unreachable(adminUrl, err, timeoutMs);
    }
    const text = await res.text();
    if (!res.ok) throw refusal(res.status, text);
    if (res.status === 204 || text === '') return { body: undefined, headers: res.headers };
    try {
      return { body: JSON.parse(text) as unknown, headers: res.headers };
    } catch {
      throw new CliError(`the admin API at ${adminUrl.origin} answered ${method} ${url.pathname} with HTTP ${res.status} but no JSON.`);
    }
  }

  return {
    async get<T>(path: string, query?: Query) {
      return (await request('GET', urlOf(path, query))).body as T;
    },

    async send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) {
      return (await request(method, urlOf(path), body)).body as T;
    },

    async list<T>(path: string, query: Query, limit: number) {
      const items: T[] = [];
      let url = urlOf(path, { ...query, limit: Math.min(limit, MAX_PAGE) });
      for (;;) {
        const { body, headers } = await request('GET', url);
        if (!Array.isArray(body)) throw new CliError(`the admin API answered GET ${url.pathname} with something other than a list.`);
        items.push(...(body as T[]));
        const next = nextLink(headers.get('link'), url);
        if (items.length >= limit || !next) return { items: items.slice(0, limit), more: items.length > limit || next !== null };
        // The token goes only where ADMIN_URL points, path prefix included, whatever a Link header says.
        if (next.origin !== adminUrl.origin) throw new CliError(`the admin API's next page is on another origin (${next.origin}); not following it with the token.`);
        if (!next.pathname.startsWith(adminUrl.pathname)) throw new CliError(`the admin API's next page (${next.pathname}) is outside ADMIN_URL's path ${adminUrl.pathname}; not following it with the token.`);
        if (body.length === 0 || next.href === url.href) throw new CliError(`the admin API's next page of GET ${url.pathname} would repeat the last one.`);
        next.searchParams.set('limit', String(Math.min(limit - items.length, MAX_PAGE)));
        url = next;
      }
    },
  };
}

/** An Error body as the API sends it, or the bare status when the body is not one (a proxy's page, say). */
function refusal(status: number, text: string): AdminApiError {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.code === 'string' && typeof body.message === 'string') return new AdminApiError(status, body.code, body.message);
  } catch {
    // Not JSON: fall through to the status alone.
  }
  return new AdminApiError(status, null, 'the admin API refused the request without an Error body');
}

function unreachable(adminUrl: URL, err: unknown, timeoutMs: number): CliError {
  const where = adminUrl.href.replace(/\/$/, '');
  if ((err as { name?: unknown }).name === 'TimeoutError') {
    return new CliError(`the admin API at ${where} did not answer within ${timeoutMs / 1000} s.`, { cause: err });
  }
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const why =
    cause?.code === 'ECONNREFUSED' ? 'connection refused'
    : typeof cause?.code === 'string' ? cause.code
    : typeof cause?.message === 'string' ? cause.message
    : err instanceof Error ? err.message : String(err);
  return new CliError(
    `cannot reach the admin API at ${where} (${why}). Check ADMIN_URL, and that the gateway runs with ADMIN_TOKEN set: it serves the admin API only then.`,
    { cause: err },
  );
}
