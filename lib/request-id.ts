import { randomFillSync, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HOLDS_KEY_PREFIX } from './key-prefixes';

/** What an `X-Request-Id` the gateway echoes, logs and lets a request log be searched by may be. */
export const REQUEST_ID_SHAPE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * An `X-Request-Id` as received, when it is safe to echo and log; undefined otherwise. An id
 * holding a key's prefix in any case may be (part of) an API key, and secrets never reach a log.
 */
export function safeRequestId(given: unknown): string | undefined {
  return typeof given === 'string' && REQUEST_ID_SHAPE.test(given) && !HOLDS_KEY_PREFIX.test(given) ? given : undefined;
}

/** The client's `X-Request-Id` when it is safe to echo and log; a fresh UUID (`fresh()`) otherwise. */
export function requestIdOf(req: IncomingMessage, fresh: () => string = randomUUID): string {
  return safeRequestId(req.headers['x-request-id']) ?? fresh();
}

const UUID_LENGTH = 36;
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;

/**
 * Random (version 4) UUIDs from the same CSPRNG as `crypto.randomUUID`, made `perBatch` at a time
 * as one flat text that each id is a slice of. `randomUUID` joins an id from twenty strings: a
 * 600-byte rope that the response's header check and the request log flatten again. Per id,
 * with the header check: 342 ns for `randomUUID` against 120 ns here (bench figures in
 * docs/benchmarks.md). A batch is 512 ids because each draw from the CSPRNG costs a system call
 * (OpenSSL's fork check, `getpid`): 5 µs a draw on a nested VM, however few its bytes. A slice
 * keeps its batch's text alive, 18 KB, for as long as it lives: what keeps an id for long keeps
 * a copy (gateway/request-log/record-text.ts).
 */
export function createRequestIds(perBatch = 512): () => string {
  const random = Buffer.alloc(16 * perBatch);
  const ascii = Buffer.alloc(UUID_LENGTH * perBatch);
  let text = '';
  let next = perBatch;

  const refill = () => {
    randomFillSync(random);
    for (let id = 0; id < perBatch; id++) writeUuid(random, id * 16, ascii, id * UUID_LENGTH);
    text = ascii.toString('latin1');
    next = 0;
  };

  return function freshRequestId() {
    if (next === perBatch) refill();
    const start = next++ * UUID_LENGTH;
    return text.slice(start, start + UUID_LENGTH);
  };
}

/**
 * One id's 16 random bytes as a version-4 UUID's 36 characters. A function of its own, called
 * once an id: inlined in `refill`'s loop, whose optimised code V8 threw away at the loop's end
 * every batch (`--trace-deopt`: no feedback yet for the `toString` after it), it ran mostly
 * unoptimised, 175 against 122 ns an id in a loop of 200,000.
 */
function writeUuid(random: Buffer, from: number, ascii: Buffer, at: number): void {
  random[from + 6] = (random[from + 6]! & 0x0f) | 0x40; // version 4
  random[from + 8] = (random[from + 8]! & 0x3f) | 0x80; // RFC 9562 variant
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) ascii[at++] = DASH;
    const byte = random[from + i]!;
    ascii[at++] = HEX_DIGITS[byte >> 4]!;
    ascii[at++] = HEX_DIGITS[byte & 0x0f]!;
  }
}
