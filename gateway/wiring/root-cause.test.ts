import { rootCause } from './root-cause';

describe('rootCause', () => {
  test('when errors are chained, then the innermost message is named', () => {
    const err = new Error('outer', { cause: new Error('inner', { cause: new Error('innermost') }) });
    expect(rootCause(err)).toBe('innermost');
  });

  test('when an AggregateError has no message, then each of its errors is listed', () => {
    const err = new Error('connect failed', { cause: new AggregateError([new Error('ECONNREFUSED ::1'), new Error('ECONNREFUSED 127.0.0.1')]) });
    expect(rootCause(err)).toBe('ECONNREFUSED ::1; ECONNREFUSED 127.0.0.1');
  });

  test('when a non-Error object is thrown, then its message, code or name is named, never "undefined"', () => {
    expect(rootCause({ message: 'disk full' })).toBe('disk full');
    expect(rootCause({ code: 'ENOSPC' })).toBe('ENOSPC');
    expect(rootCause({ name: 'ErrnoError', errno: 51 })).toBe('ErrnoError');
    expect(rootCause(undefined)).toBe('undefined');
    expect(rootCause(new Error(''))).toBe('Error');
  });
});
