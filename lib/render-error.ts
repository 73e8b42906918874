import { STATUS_CODES, type ServerResponse } from 'node:http';
import { ApiError, toApiError } from './api-error';

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
  const body = JSON.stringify(apiError.toBody());
  for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
  res.statusCode = apiError.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
  return apiError;
}

/**
 * The same Error body as a whole HTTP/1.1 response, for a connection Node's parser gave up on
 * before there was a request or a response object to answer with. The connection then closes:
 * what follows the bad bytes cannot be told apart from them.
 */
export function errorResponseBytes(apiError: ApiError): Buffer {
  const body = JSON.stringify(apiError.toBody());
  const head = [
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}`,
    ...Object.entries(apiError.headers).map(([name, value]) => `${name}: ${value}`),
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
}
