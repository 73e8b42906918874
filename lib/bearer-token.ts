import { createHash } from 'node:crypto';

const BEARER = /^bearer[ \t]+([^\s]+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined for any other form, or none. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}

/** SHA-256 of a secret: digests have one length, so comparing two in constant time says nothing of a token's length or prefix. */
export function secretDigest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
