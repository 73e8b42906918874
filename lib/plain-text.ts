/**
 * What the product accepts as text from a client. PostgreSQL refuses a NUL in a text value (a
 * create would fail with 500), and a UTF-16 surrogate without its pair is stored as U+FFFD,
 * another string than the one the client sent; both are refused with a 400 before they get there.
 * So are bidirectional embeddings, overrides and isolates, which make a text display in another
 * order than it is stored ("Trojan Source"), and a value nobody can see.
 */

/**
 * Control characters (C0, DEL, C1), unpaired surrogates (`\p{Cs}` matches only those under the
 * `u` flag), and the line and paragraph separators U+2028 and U+2029, line breaks by another name.
 */
const NOT_ONE_LINE = /[\p{Cc}\p{Cs}\u2028\u2029]/u;
/** The same, but tab, line feed and carriage return are part of a text. */
const NOT_TEXT = /(?![\t\n\r])[\p{Cc}\p{Cs}]/u;
/**
 * Embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). The marks U+200E,
 * U+200F and U+061C stay allowed: they change no strong character's direction, and mixed
 * right-to-left text needs them.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/** A character that shows: not white space, not default-ignorable (zero-width characters, Hangul fillers, tags, variation selectors, ...), not the blank Braille pattern. */
const VISIBLE = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/u;
/** Characters that show nothing, so two identifiers differing only by them look alike. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/u;

/** Why a client's text is refused. */
export type TextProblem = 'control' | 'bidi' | 'invisible';

function problemOf(value: string, controls: RegExp): TextProblem | undefined {
  if (controls.test(value)) return 'control';
  if (BIDI_CONTROL.test(value)) return 'bidi';
  // An empty value is for length rules to refuse; only a non-empty one can be all invisible.
  if (value.length > 0 && !VISIBLE.test(value)) return 'invisible';
  return undefined;
}

/** A name: no control characters at all, well-formed Unicode, no bidirectional controls, something visible. */
export function oneLineTextProblem(value: string): TextProblem | undefined {
  return problemOf(value, NOT_ONE_LINE);
}

/** A message: may span lines, otherwise as `oneLineTextProblem`. */
export function textProblem(value: string): TextProblem | undefined {
  return problemOf(value, NOT_TEXT);
}

export function isOneLineText(value: string): boolean {
  return oneLineTextProblem(value) === undefined;
}

/** An identifier (an email): one-line text without any default-ignorable code point, visible or not around it. */
export function hasInvisibleCharacters(value: string): boolean {
  return INVISIBLE.test(value);
}

/** The end of the sentence "<field> …" that tells a client why its text was refused. */
export function textProblemSentence(problem: TextProblem, multiline = false): string {
  switch (problem) {
    case 'control':
      return multiline
        ? 'must not contain control characters (tab and line breaks aside) or unpaired surrogates'
        : 'must not contain control characters or unpaired surrogates';
    case 'bidi':
      return 'must not contain bidirectional embedding, override or isolate characters';
    case 'invisible':
      return 'must contain a visible character, not only spaces and invisible ones';
  }
}

const MAX_QUOTED_LENGTH = 40;

/** A client's text quoted in an error message (an unknown field, an unsupported header value): at most 40 characters. */
export function quotedInMessage(text: string): string {
  return text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH)}…` : text;
}
