import { KEY_PREFIXES } from '../lib/key-prefixes';

/** A whole API key (an environment's prefix and more than the 6 visible characters), anywhere in a text. */
const WHOLE_KEY = new RegExp(`(?:${Object.values(KEY_PREFIXES).join('|')})[A-Za-z0-9_-]{7,}`, 'g');

export function isWholeKey(value: string): boolean {
  return new RegExp(`^${WHOLE_KEY.source}$`).test(value.trim());
}

/** The text with every whole key cut to its visible prefix: what the CLI prints never repeats a secret. */
export function redactKeys(text: string): string {
  return text.replace(WHOLE_KEY, (key) => `${key.slice(0, 15)}…(redacted)`);
}
