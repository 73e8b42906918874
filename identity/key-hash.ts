import { createHash, hash } from 'node:crypto';

const BLOCK_BYTES = 64; // SHA-256's block size
const DIGEST_BYTES = 32;
/** API keys are 52 characters; room for longer input without allocating. */
const MESSAGE_ROOM = 256;

/**
 * HMAC-SHA-256 (RFC 2104) of a UTF-8 string, hex: the same output as
 * `createHmac('sha256', secret).update(message).digest('hex')`, computed as two one-shot
 * `crypto.hash` calls over pads derived once. `createHmac` builds a native object per call; this
 * costs under half as much, and it runs whenever a connection presents a key it has not sent before.
 */
export function createKeyHasher(secret: string): (message: string) => string {
  let key = Buffer.from(secret, 'utf8');
  if (key.length > BLOCK_BYTES) key = createHash('sha256').update(key).digest();
  const inner = Buffer.alloc(BLOCK_BYTES + MESSAGE_ROOM);
  const outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES);
  for (let i = 0; i < BLOCK_BYTES; i++) {
    const k = key[i] ?? 0;
    inner[i] = k ^ 0x36;
    outer[i] = k ^ 0x5c;
  }
  const innerPad = inner.subarray(0, BLOCK_BYTES);

  return function keyedHash(message: string): string {
    const length = Buffer.byteLength(message, 'utf8');
    // The shared buffers are filled and hashed synchronously, so concurrent callers never interleave.
    const innerInput = length <= MESSAGE_ROOM ? inner.subarray(0, BLOCK_BYTES + inner.write(message, BLOCK_BYTES, 'utf8')) : Buffer.concat([innerPad, Buffer.from(message, 'utf8')]);
    hash('sha256', innerInput, 'buffer').copy(outer, BLOCK_BYTES);
    return hash('sha256', outer, 'hex');
  };
}
