/**
 * Text from the API (emails, key names, reasons) is written to a terminal: a control character
 * there could move the cursor, rewrite earlier lines or set the window title, and a bidirectional
 * override could make one value read as another. Such characters are shown as `\u{…}` escapes.
 */
const UNSAFE = /[\p{Cc}\p{Cs}\u2028\u2029\u202A-\u202E\u2066-\u2069]/gu;

export function terminalSafe(value: string): string {
  return value.replace(UNSAFE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
