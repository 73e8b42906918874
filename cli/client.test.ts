import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminClient } from './client';
import { AdminApiError, CliError } from './errors';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** A real HTTP server standing in for the admin API: `handle` answers, every request is recorded. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, base: string) => void) {
  const seen: Seen[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, contentType: req.headers['content-type'], body });
      handle(req, res, base);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Also ends keep-alive and never-answered connections, so close resolves at once.
  const close = () => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  });
  return { base, seen, close };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** 250 items with ids 1..250, paginated as the admin API does. */
function pages(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url!, 'http://x');
  const limit = Number(url.searchParams.get('limit') ?? 50);
  const after = Number(url.searchParams.get('after') ?? 0);
  const items = Array.from({ length: 250 }, (_, i) => ({ id: i + 1 })).filter((item) => item.id > after).slice(0, limit);
  const last = items[items.length - 1]?.id ?? 0;
  json(res, 200, items, last < 250 ? { link: `</admin/v1/accounts?limit=${limit}&after=${last}>; rel="next"` } : {});
}

describe('the admin client', () => {
  test('when a list has several pages, then it follows rel="next" until the end, asking 100 at a time, with the token each time', async () => {
    const api = await serve(pages);
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 'tok-1' });
      const { items, more } = await client.list<{ id: number }>('admin/v1/accounts', { email: undefined }, 1000);
      expect(items.map((i) => i.id)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
      expect(more).toBe(false);
      expect(api.seen.map((s) => s.url)).toEqual(['/admin/v1/accounts?limit=100', '/admin/v1/accounts?limit=100&after=100', '/admin/v1/accounts?limit=100&after=200']);
      expect(new Set(api.seen.map((s) => s.authorization))).toEqual(new Set(['Bearer tok-1']));
    } finally {
      await api.close();
    }
  });

  test('when --limit is reached, then it asks only for what is left, stops, and says there are more', async () => {
    const api = await serve(pages);
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' });
      const { items, more } = await client.list<{ id: number }>('admin/v1/accounts', {}, 130);
      expect(items).toHaveLength(130);
      expect(items[129]).toEqual({ id: 130 });
      expect(more).toBe(true);
      expect(api.seen.map((s) => s.url)).toEqual(['/admin/v1/accounts?limit=100', '/admin/v1/accounts?limit=30&after=100']);
    } finally {
      await api.close();
    }
  });

  test('when the last page is exactly --limit long and has no next link, then there are no more', async () => {
    const api = await serve(pages);
    try {
      const { items, more } = await createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' }).list('admin/v1/accounts', { after: 200 }, 50);
      expect(items).toHaveLength(50);
      expect(more).toBe(false);
    } finally {
      await api.close();
    }
  });

  test('when a next link points at another origin, then the token is not sent there', async () => {
    const elsewhere = await serve((_req, res) => json(res, 200, []));
    const api = await serve((_req, res) => json(res, 200, [{ id: 1 }], { link: `<${elsewhere.base}/steal?after=1>; rel="next"` }));
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 'secret' });
      await expect(client.list('admin/v1/accounts', {}, 10)).rejects.toThrow(new CliError(`the admin API's next page is on another origin (${elsewhere.base}); not following it with the token.`));
      expect(elsewhere.seen).toEqual([]);
    } finally {
      await api.close();
      await elsewhere.close();
    }
  });

  test('when ADMIN_URL has a path prefix and a next link leaves it, then the token is not sent there', async () => {
    const api = await serve((req, res) => json(res, 200, [{ id: 1 }], req.url!.startsWith('/ops/') ? { link: '</admin/v1/accounts?after=1>; rel="next"' } : {}));
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/ops/`), token: 'secret' });
      await expect(client.list('admin/v1/accounts', {}, 10)).rejects.toThrow(
        new CliError("the admin API's next page (/admin/v1/accounts) is outside ADMIN_URL's path /ops/; not following it with the token."),
      );
      expect(api.seen.map((s) => s.url)).toEqual(['/ops/admin/v1/accounts?limit=10']);
    } finally {
      await api.close();
    }
  });

  test('when ADMIN_URL has a path prefix and a next link is a query alone, then the next page is asked below the prefix', async () => {
    const api = await serve((req, res) => json(res, 200, [{ id: 1 }], req.url!.includes('after=') ? {} : { link: '<?after=1>; rel="next"' }));
    try {
      const { items } = await createAdminClient({ adminUrl: new URL(`${api.base}/ops/`), token: 't' }).list('admin/v1/accounts', {}, 10);
      expect(items).toEqual([{ id: 1 }, { id: 1 }]);
      expect(api.seen.map((s) => s.url)).toEqual(['/ops/admin/v1/accounts?limit=10', '/ops/admin/v1/accounts?after=1&limit=9']);
    } finally {
      await api.close();
    }
  });

  test('when a next link repeats the page, then it stops instead of looping', async () => {
    const api = await serve((req, res) => json(res, 200, [{ id: 1 }], { link: `<${req.url}>; rel="next"` }));
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' });
      await expect(client.list('admin/v1/audit', {}, 10)).rejects.toThrow("the admin API's next page of GET /admin/v1/audit would repeat the last one.");
      expect(api.seen).toHaveLength(1);
    } finally {
      await api.close();
    }
  });

  test('when the API answers an Error body, then an AdminApiError with its code, message and status', async () => {
    const api = await serve((_req, res) => json(res, 409, { code: 'conflict', message: 'Account 3 is already suspended.', status: 409 }));
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' });
      const failure = await client.send('POST', 'admin/v1/accounts/3/suspend', { reason: 'spam' }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(AdminApiError);
      expect(failure).toMatchObject({ status: 409, code: 'conflict', message: 'Account 3 is already suspended.' });
      expect(api.seen[0]).toMatchObject({ method: 'POST', url: '/admin/v1/accounts/3/suspend', contentType: 'application/json', body: '{"reason":"spam"}' });
    } finally {
      await api.close();
    }
  });

  test('when the API answers an error that is not an Error body, or redirects, then the status alone', async () => {
    const api = await serve((req, res) => {
      if (req.url!.includes('redirect')) {
        res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
        return res.end();
      }
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad Gateway</h1>');
    });
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' });
      await expect(client.get('admin/v1/plans')).rejects.toMatchObject({ status: 502, code: null });
      await expect(client.get('admin/v1/redirect')).rejects.toMatchObject({ status: 302, code: null });
      expect(api.seen).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  test('when a write answers 204, then undefined; when a success is not JSON, then a CliError', async () => {
    const api = await serve((req, res) => {
      if (req.method === 'DELETE') {
        res.writeHead(204);
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' });
      await expect(client.send('DELETE', 'admin/v1/accounts/4')).resolves.toBeUndefined();
      expect(api.seen[0]!.body).toBe('');
      await expect(client.get('admin/v1/plans')).rejects.toThrow(`the admin API at ${api.base} answered GET /admin/v1/plans with HTTP 200 but no JSON.`);
    } finally {
      await api.close();
    }
  });

  test('when ADMIN_URL has a path prefix, then API paths go below it', async () => {
    const api = await serve((_req, res) => json(res, 200, []));
    try {
      await createAdminClient({ adminUrl: new URL(`${api.base}/ops/`), token: 't' }).get('admin/v1/plans');
      expect(api.seen[0]!.url).toBe('/ops/admin/v1/plans');
    } finally {
      await api.close();
    }
  });

  test('when nothing listens at ADMIN_URL, then the message names the URL and says the gateway needs ADMIN_TOKEN', async () => {
    const api = await serve((_req, res) => json(res, 200, []));
    await api.close();
    const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't' });
    await expect(client.get('admin/v1/plans')).rejects.toThrow(
      `cannot reach the admin API at ${api.base} (connection refused). Check ADMIN_URL, and that the gateway runs with ADMIN_TOKEN set: it serves the admin API only then.`,
    );
  });

  test('when the API does not answer in time, then a CliError says so', async () => {
    const api = await serve(() => undefined);
    try {
      const client = createAdminClient({ adminUrl: new URL(`${api.base}/`), token: 't', timeoutMs: 200 });
      await expect(client.get('admin/v1/plans')).rejects.toThrow(`the admin API at ${api.base} did not answer within 0.2 s.`);
    } finally {
      await api.close();
    }
  });
});

