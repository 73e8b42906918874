import { hasInvisibleCharacters, isOneLineText, oneLineTextProblem, textProblem, textProblemSentence } from './plain-text';

const BIDI_CONTROLS = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];
/** Each shows nothing: zero-width space, non-joiner, joiner, word joiner, BOM, Hangul fillers, Mongolian vowel separator, soft hyphen, a tag, a variation selector, Braille blank. */
const INVISIBLE = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u3164', '\u115F', '\u1160', '\uFFA0', '\u180E', '\u00AD', '\u{E0041}', '\uFE0F', '\u2800'];
const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

describe('plain text', () => {
  test('when a name holds a line or paragraph separator (U+2028, U+2029), then it is refused like any line break; a message may hold them', () => {
    for (const c of ['\u2028', '\u2029']) {
      expect(oneLineTextProblem(`Rex${c}Two`)).toBe('control');
      expect(textProblem(`line one${c}line two`)).toBeUndefined();
    }
  });

  test('when a name or message has letters, emoji, joiners inside and right-to-left marks, then it is accepted', () => {
    for (const value of ['Rex 🐶 Ünal', 'Family 👨\u200D👩\u200D👧', 'می\u200Cخواهم', 'שלום\u200F (2)', 'abc\u061C', 'e\u0301']) {
      expect(oneLineTextProblem(value)).toBeUndefined();
      expect(textProblem(value)).toBeUndefined();
    }
    expect(textProblem('line one\r\n\tline two\n')).toBeUndefined();
  });

  test('when text holds a control character or an unpaired surrogate, then the problem is "control"', () => {
    for (const value of ['R\u0000x', 'R\u0007x', 'R\nx', 'R\u007Fx', 'R\u0085x', 'R\ud800x', 'R\udc00x']) expect(oneLineTextProblem(value)).toBe('control');
    expect(textProblem('a\u0000b')).toBe('control');
    expect(textProblem('a\nb')).toBeUndefined();
  });

  test.each(BIDI_CONTROLS.map((c) => [hex(c), c]))('when text holds the bidirectional control %s, then the problem is "bidi", on its own or among letters', (_label, c) => {
    expect(oneLineTextProblem(`Rex${c}xoF`)).toBe('bidi');
    expect(oneLineTextProblem(c)).toBe('bidi');
    expect(textProblem(`line one\n${c}line two`)).toBe('bidi');
  });

  test.each(INVISIBLE.map((c) => [hex(c), c]))('when text is only %s, alone, repeated or with spaces, then the problem is "invisible"', (_label, c) => {
    for (const value of [c, c.repeat(3), ` ${c}\u00A0${c}\u3000`]) {
      expect(oneLineTextProblem(value)).toBe('invisible');
      expect(textProblem(value)).toBe('invisible');
    }
    expect(textProblem(`\n${c}\t\r\n`)).toBe('invisible');
    expect(oneLineTextProblem(`a${c}`)).toBeUndefined();
  });

  test('when text is only spaces, then it is "invisible"; when it is empty, length rules decide, not this', () => {
    expect(oneLineTextProblem('   ')).toBe('invisible');
    expect(textProblem(' \n\t ')).toBe('invisible');
    expect(oneLineTextProblem('')).toBeUndefined();
    expect(isOneLineText('Rex')).toBe(true);
    expect(isOneLineText('\u200B')).toBe(false);
  });

  test('when an identifier holds any default-ignorable code point, visible text around it or not, then it has invisible characters', () => {
    for (const c of [...INVISIBLE.filter((c) => c !== '\u2800'), ...BIDI_CONTROLS, '\u200E', '\u200F', '\u061C']) {
      expect(hasInvisibleCharacters(`ad${c}a@example.com`)).toBe(true);
    }
    expect(hasInvisibleCharacters('ünal@example.com')).toBe(false);
  });

  test('when a problem is described, then the sentence says what to change', () => {
    expect(textProblemSentence('control')).toBe('must not contain control characters or unpaired surrogates');
    expect(textProblemSentence('control', true)).toBe('must not contain control characters (tab and line breaks aside) or unpaired surrogates');
    expect(textProblemSentence('bidi')).toBe('must not contain bidirectional embedding, override or isolate characters');
    expect(textProblemSentence('invisible', true)).toBe('must contain a visible character, not only spaces and invisible ones');
  });
});
