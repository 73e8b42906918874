import { AdminApiError, CliError, formatError } from './errors';
import { terminalSafe } from './terminal-text';

describe('formatError', () => {
  test('when the API sent an Error body, then its message, code and status', () => {
    expect(formatError(new AdminApiError(409, 'conflict', 'Account 3 is already suspended.'))).toBe('error: Account 3 is already suspended. (conflict, HTTP 409)');
  });

  test('when the API answered without an Error body, then the status alone', () => {
    expect(formatError(new AdminApiError(502, null, 'the admin API refused the request without an Error body'))).toBe(
      'error: the admin API refused the request without an Error body (HTTP 502)',
    );
  });

  test('when the CLI refused, then its message alone', () => {
    expect(formatError(new CliError('add --yes to do it.'))).toBe('error: add --yes to do it.');
  });

  test('when something unforeseen was thrown, then it says so', () => {
    expect(formatError(new TypeError('x is undefined'))).toBe('error: unexpected failure: x is undefined');
    expect(formatError('a string')).toBe('error: unexpected failure: a string');
  });

  test('when a message holds terminal control sequences, then they are shown escaped, not obeyed', () => {
    expect(formatError(new AdminApiError(400, 'invalid_request', 'bad \u001b]0;title\u0007 \u202Eevil'))).toBe(
      'error: bad \\u{1b}]0;title\\u{7} \\u{202e}evil (invalid_request, HTTP 400)',
    );
  });
});

describe('terminalSafe', () => {
  test('when text is printable (accents, CJK, emoji, direction marks), then it is unchanged', () => {
    const text = 'zoë 字 🐕 \u200Fשלום';
    expect(terminalSafe(text)).toBe(text);
  });

  test('when text holds line breaks, tabs, DEL, C1 controls, isolates or a lone surrogate, then each is escaped', () => {
    expect(terminalSafe('a\nb\tc\u007F\u009B\u2066\uD800\u2028')).toBe('a\\u{a}b\\u{9}c\\u{7f}\\u{9b}\\u{2066}\\u{d800}\\u{2028}');
  });
});
