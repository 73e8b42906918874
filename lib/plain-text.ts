/**
 * What the product accepts as text from a client. PostgreSQL refuses a NUL in a text value (a
 * create would fail with 500), and a UTF-16 surrogate without its pair is stored as U+FFFD,
 * another string than the one the client sent; both are refused with a 400 before they get there.
 */

/** Control characters (C0, DEL, C1) and unpaired surrogates (`\p{Cs}` matches only those under the `u` flag). */
const NOT_ONE_LINE = /[\p{Cc}\p{Cs}]/u;
/** The same, but tab, line feed and carriage return are part of a text. */
const NOT_TEXT = /(?![\t\n\r])[\p{Cc}\p{Cs}]/u;

/** A name, an email: no control characters at all, and well-formed Unicode. */
export function isOneLineText(value: string): boolean {
  return !NOT_ONE_LINE.test(value);
}

/** A message: may span lines, otherwise as `isOneLineText`. */
export function isText(value: string): boolean {
  return !NOT_TEXT.test(value);
}

const MAX_QUOTED_LENGTH = 40;

/** A client's text quoted in an error message (an unknown field, an unsupported header value): at most 40 characters. */
export function quotedInMessage(text: string): string {
  return text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text;
}
