import { maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../../lib/api-error';
import { errorResponseBytes, renderError } from '../../lib/render-error';
import { requestIdOf } from '../../lib/request-id';
import type { EarlyRefusalCode } from '../metrics/gateway-metrics';

/**
 * What Node's HTTP parser refuses before any handler runs (a malformed request line or header,
 * headers over the size limit, a request that outlived `requestTimeout`) is answered with an
 * Error body like every other refusal; Node's own answer is a bare status line. So is CONNECT,
 * which Node would answer by closing the connection.
 */
export function answerMalformedRequests(server: Server, counted: CountRefusal): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    afterEarlierRequests(socket, parserError(err), counted);
  });
  // Node hands CONNECT to 'connect' listeners only, and closes the connection without a word when there is none.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const message = 'CONNECT is not supported: the gateway is not a forward proxy.';
    refuse(socket, errorResponseBytes(refused(counted, { code: 'invalid_request', message })));
  });
}

/** Counts a refusal made before routing (for the metrics). */
export type CountRefusal = (code: EarlyRefusalCode) => void;

interface EarlyRefusal {
  code: EarlyRefusalCode;
  message: string;
}

/** The refusal's ApiError, counted under the code it answers with, so the metric and the answer never differ. */
function refused(counted: CountRefusal, { code, message }: EarlyRefusal): ApiError {
  counted(code);
  return new ApiError(code, message);
}

function refuse(socket: Duplex, refusal: Buffer): void {
  if (socket.writable) socket.end(refusal, () => socket.destroy());
  else socket.destroy();
}

/** Responses whose request the parser refused mid-body, answered on the socket instead: the refusal each one's client got. */
const answeredOnSocket = new WeakMap<ServerResponse, ApiError>();

/**
 * The refusal a response's client got on the socket, when the parser refused its request's body
 * (malformed, or too slow) before the response began: the response itself never writes, and its
 * close is not a client that left.
 */
export function refusalOnSocket(res: ServerResponse): ApiError | undefined {
  return answeredOnSocket.get(res);
}

/**
 * Refuses once the requests read whole before the bad bytes have been answered, in order:
 * Node's own answer would go out ahead of a response still being prepared, and then cut it off.
 * When the bad bytes are the body of the request being answered, that request is refused now,
 * or cut off if its response has begun; an API request's is then counted with its route, not as a
 * refusal before routing. Node keeps the response being written in `_httpMessage` and
 * moves the next queued one there when it finishes.
 */
function afterEarlierRequests(socket: Duplex, refusal: EarlyRefusal, counted: CountRefusal): void {
  const current = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!current || current.writableFinished || current.destroyed) return refuse(socket, errorResponseBytes(refused(counted, refusal)));
  if (!current.req.complete) {
    if (current.headersSent) return void socket.destroy();
    // An API request is counted with its route when its response closes (log-request.ts); any other one here.
    const err = 'ctx' in current.req ? new ApiError(refusal.code, refusal.message) : refused(counted, refusal);
    answeredOnSocket.set(current, err);
    return refuse(socket, errorResponseBytes(err));
  }
  let settled = false;
  const next = () => {
    if (settled) return;
    settled = true;
    afterEarlierRequests(socket, refusal, counted);
  };
  current.once('finish', next);
  current.once('close', next);
}

function parserError(err: Error & { code?: string }): EarlyRefusal {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      // The server sets no limit of its own: Node's (16 KiB, or --max-http-header-size).
      return { code: 'headers_too_large', message: `The request line and headers must not exceed ${maxHeaderSize / 1024} KiB.` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'payload_too_large', message: 'The chunk extensions of the request body are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', message: 'The request did not arrive in time.' };
    default:
      // The parser's code names what is wrong (HPE_INVALID_METHOD, HPE_UNEXPECTED_CONTENT_LENGTH, …) and says nothing secret.
      return { code: 'invalid_request', message: `The request is not valid HTTP/1.1${err.code ? ` (${err.code})` : ''}.` };
  }
}

/**
 * What Node's parser lets through but the gateway does not serve: a version other than HTTP/1.x
 * (llhttp accepts `HTTP/0.9`, a bare `GET /` line, and `HTTP/2.0`), an HTTP/1.1 request without
 * a Host header, and a request with more than one (RFC 9112 §3.2; Node keeps the first and drops
 * the rest, where a proxy in front may have routed by another). Node's own Host check answers
 * with an empty 400; the server turns it off and this one answers with an Error body instead.
 * True when the request was refused.
 */
export function refuseMalformedHead(req: IncomingMessage, res: ServerResponse, counted: CountRefusal): boolean {
  let message: string;
  if (req.httpVersionMajor !== 1) message = `HTTP/${req.httpVersion} is not supported: send HTTP/1.1.`;
  else if (req.headers.host === undefined) {
    if (req.httpVersionMinor !== 1) return false;
    message = 'An HTTP/1.1 request must have a Host header.';
  } else if (hasSecondHost(req.rawHeaders)) message = 'A request must have exactly one Host header.';
  else return false;
  res.setHeader('Connection', 'close');
  res.setHeader('X-Request-Id', requestIdOf(req));
  renderError(res, refused(counted, { code: 'invalid_request', message }));
  return true;
}

const HOST = /^host$/i;

/** Names sit at even indexes of rawHeaders; a Host header is known to be present. A test, not toLowerCase: no string per request. */
function hasSecondHost(rawHeaders: string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 4 || !HOST.test(name)) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}
