import { InvalidArgumentError } from 'commander';
import { CliError } from './errors';
import { isWholeKey } from './key-text';

/** Parsers for commander: each refuses a bad value before any request is made, saying what was expected. */

export const DEFAULT_LIST_LIMIT = 1000;

/** The whole number the text spells, or NaN. */
const whole = (value: string) => (/^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : NaN);

function wholeNumber(value: string, min: number, what: string): number {
  const n = whole(value);
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`${what} must be a whole number of at least ${min}.`);
  return n;
}

export const accountId = (value: string) => wholeNumber(value, 1, 'An account id');
export const listLimit = (value: string) => wholeNumber(value, 1, '--limit');
export const perMinute = (value: string) => wholeNumber(value, 1, '--per-minute');

/** A monthly quota, or `none` for no quota (not null here: commander turns a parser's null into ""). */
export function monthlyQuota(value: string): number | 'none' {
  if (value.trim().toLowerCase() === 'none') return 'none';
  const n = whole(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('--per-month must be "none" or a whole number of at least 1.');
  return n;
}

export function reason(value: string): string {
  if (!value.trim()) throw new InvalidArgumentError('A reason must say something.');
  return value;
}

/**
 * A whole key pasted where an id or prefix belongs would land in a URL and the gateway's access
 * log. Checked in the action, not as a commander parser, whose message repeats the value.
 */
export function refuseSecret(value: string, what: string): void {
  if (isWholeKey(value)) {
    throw new CliError(`that is a whole key, not ${what}: to revoke a leaked key, pass it to "keys revoke-secret" on stdin or with --key-file, and clear it from your shell history.`);
  }
}
