import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { ApiError } from './api-error';
import { quotedInMessage } from './plain-text';

export const MAX_BODY_BYTES = 64 * 1024;

export interface JsonBody {
  /** The bytes exactly as received, so a proxy can forward what was validated. */
  raw: Buffer;
  value: unknown;
}

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * Reads a JSON request body with the product's rules: `Content-Type: application/json`,
 * no content coding, at most `limit` bytes (checked against Content-Length first, then while
 * streaming), well-formed JSON in UTF-8. Every failure is an ApiError with its own code.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<JsonBody> {
  const declared = req.headers['content-length'];
  // Left unread (and, with Expect: 100-continue, never invited): the refusal closes the connection.
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const type = req.headers['content-type'];
  const raw = await collect(req, limit);
  if (raw.length === 0) throw new ApiError('invalid_request', 'A JSON request body is required.');
  if (!type || !JSON_TYPE.test(type)) {
    throw new ApiError('invalid_content_type', 'The request body must be sent with "Content-Type: application/json".');
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new ApiError('invalid_content_type', `Content-Encoding "${quotedInMessage(encoding)}" is not supported: send the JSON body uncompressed.`);
  }
  // Decoding would turn every invalid byte into U+FFFD: a string the client never sent, stored as if it had.
  if (!isUtf8(raw)) throw new ApiError('invalid_json', 'The request body is not valid UTF-8, which JSON must be.');
  try {
    return { raw, value: JSON.parse(raw.toString('utf8')) };
  } catch (err) {
    throw new ApiError('invalid_json', 'The request body is not valid JSON.', { cause: err });
  }
}

/** Whether the request says it has a body: any Transfer-Encoding, or a Content-Length other than 0. */
export function declaresBody(req: IncomingMessage): boolean {
  // One read of Node's `headers` getter, a megamorphic load per call on every request's hot path.
  const { 'content-length': length, 'transfer-encoding': encoding } = req.headers;
  return encoding !== undefined || (length !== undefined && Number(length) !== 0);
}

function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `The request body must not exceed ${limit / 1024} KiB.`);
}

function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(tooLarge(limit));
        return; // keep reading (and discarding) so the 413 reaches the client
      }
      chunks.push(chunk);
    });
    req.on('end', () => failed || resolve(Buffer.concat(chunks, size)));
    req.on('error', (err) => failed || reject(new ApiError('invalid_request', 'The request body could not be read.', { cause: err })));
    req.on('aborted', () => failed || reject(new ApiError('invalid_request', 'The request body was cut off.')));
  });
}
