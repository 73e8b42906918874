import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { ApiError, toApiError } from './api-error';
import { declaresBody } from './read-json-body';

/** An Error body and the headers every Error response carries, whichever way it is sent. */
function errorMessage(apiError: ApiError): { body: string; headers: Array<[string, string | number]> } {
  const body = JSON.stringify(apiError.toBody());
  return {
    body,
    headers: [
      ...Object.entries(apiError.headers),
      ['Content-Type', 'application/json; charset=utf-8'],
      ['Content-Length', Buffer.byteLength(body)],
      ['Cache-Control', 'no-store'],
    ],
  };
}

/**
 * The one place that writes an Error body. Works on a bare Node response so the gateway's
 * hot path, the pet store and the portal (Express responses are ServerResponses) share it.
 */
export function renderError(res: ServerResponse, err: unknown): ApiError {
  const apiError = toApiError(err);
  if (res.headersSent) {
    // Too late for a clean body: cut the connection so the client sees a failure, not a truncated success.
    res.destroy();
    return apiError;
  }
  const { body, headers } = errorMessage(apiError);
  res.statusCode = apiError.status;
  for (const [name, value] of headers) res.setHeader(name, value);
  // A refusal before the body was read must not stay on the connection reading a body without end.
  if (bodyStillArriving(res.req)) res.setHeader('Connection', 'close');
  res.end(body);
  return apiError;
}

/** True while a request that declares a body has not received all of it. */
export function bodyStillArriving(req: IncomingMessage | undefined): boolean {
  return req !== undefined && !req.complete && declaresBody(req);
}

/**
 * The same Error body as a whole HTTP/1.1 response, for a connection Node's parser gave up on
 * before there was a request or a response object to answer with. The connection then closes:
 * what follows the bad bytes cannot be told apart from them.
 */
export function errorResponseBytes(apiError: ApiError): Buffer {
  const { body, headers } = errorMessage(apiError);
  const head = [
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
}
