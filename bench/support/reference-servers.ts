/**
 * The plain Node servers the gateway is measured against, each a few lines in its own process,
 * started with the bench's core pinning: what any Node server pays for the same job.
 */

/** A gateway hit's headers but its length, as the gateway names them; the values are fixed, of the same length. */
export const HIT_HEADERS: readonly string[] = [
  'X-Request-Id', '4258b6f4-6aa7-4828-b2b3-586f25267c6c',
  'RateLimit-Policy', '"minute";q=10000000;w=60',
  'RateLimit', '"minute";r=9999999;t=60',
  'X-Cache', 'HIT',
  'Content-Type', 'application/json; charset=utf-8',
  'Age', '0',
];

/**
 * Serves `body` from memory on every path, with `headers` (name, value, …) and its length: as JSON
 * alone, the hit ceiling and the fast upstream of a miss; with HIT_HEADERS, the part of a hit's gap
 * that is the contract's headers, which any Node server answering the contract pays.
 */
export function bytesServerScript(
  body: Buffer,
  port: number,
  headers: readonly string[] = ['content-type', 'application/json; charset=utf-8'],
  /** Node's 5 s unless given: a server under valgrind may stall longer than that between requests. */
  keepAliveTimeoutMs?: number,
): string {
  return `const body = Buffer.from(${JSON.stringify(body.toString('base64'))}, 'base64');
const headers = [...${JSON.stringify(headers)}, 'content-length', body.length];
require('node:http').createServer(${serverOptions(keepAliveTimeoutMs)}(q, s) => { s.writeHead(200, headers); s.end(body); })
  .listen(${port}, '127.0.0.1', () => console.log('listening'));`;
}

/**
 * The floor of a miss: a \`node:http\` server piping each request to the upstream through a
 * keep-alive \`http.Agent\` and the answer back, with no check, header rewrite or log.
 */
export function bareProxyScript(upstreamPort: number, port: number, keepAliveTimeoutMs?: number): string {
  return `const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
http.createServer(${serverOptions(keepAliveTimeoutMs)}(q, s) => {
  const up = http.request({ host: '127.0.0.1', port: ${upstreamPort}, method: q.method, path: q.url, headers: q.headers, agent }, (r) => { s.writeHead(r.statusCode, r.headers); r.pipe(s); });
  up.on('error', () => { s.statusCode = 502; s.end(); });
  q.pipe(up);
}).listen(${port}, '127.0.0.1', () => console.log('listening'));`;
}

/**
 * http-proxy-middleware alone in front of the fast upstream, set up as the gateway's proxy step
 * sets it up (a keep-alive agent, the target parsed once, req.url taken as the path, no plugins)
 * but answering through its own pipe: what the package costs before the gateway adds anything.
 */
export function middlewareProxyScript(upstreamPort: number, port: number, keepAliveTimeoutMs?: number): string {
  return `const http = require('node:http');
const { createProxyMiddleware } = require('http-proxy-middleware');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const target = { protocol: 'http:', host: '127.0.0.1:${upstreamPort}', hostname: '127.0.0.1', port: '${upstreamPort}', path: '' };
const proxy = createProxyMiddleware({ target, toProxy: true, agent, ejectPlugins: true });
http.createServer(${serverOptions(keepAliveTimeoutMs)}(q, s) => proxy(q, s, () => { s.statusCode = 404; s.end(); })).listen(${port}, '127.0.0.1', () => console.log('listening'));`;
}

/** A plain Express 5 app sending the same bytes: what a naive design gets, no auth, no limit. */
export function expressScript(body: Buffer, port: number): string {
  return `const body = Buffer.from(${JSON.stringify(body.toString('base64'))}, 'base64');
const app = require('express')(); app.disable('x-powered-by');
app.get('/pets', (q, s) => { s.type('application/json; charset=utf-8'); s.send(body); });
app.listen(${port}, '127.0.0.1', () => console.log('listening'));`;
}

/** `createServer`'s options argument, in a script's text: none (Node's 5 s keep-alive) unless a timeout is given. */
function serverOptions(keepAliveTimeoutMs: number | undefined): string {
  return keepAliveTimeoutMs === undefined ? '' : `{ keepAliveTimeout: ${keepAliveTimeoutMs} }, `;
}
