import { entryNames, normalisedQueryKey } from './list-cache';

describe('list entry names', () => {
  test('when both environments name the same query, then each gets its own name, the same at every lookup', () => {
    const nameOf = entryNames();
    expect([nameOf('production', 'limit=20'), nameOf('staging', 'limit=20'), nameOf('production', 'limit=20')]).toEqual([
      'production limit=20',
      'staging limit=20',
      'production limit=20',
    ]);
  });

  test('when more names are asked for than it remembers, then it starts afresh and every name is still right', () => {
    const nameOf = entryNames(3);
    const asked: Array<[string, string]> = [
      ['production', 'a'],
      ['staging', 'a'],
      ['production', 'b'],
      ['staging', 'b'],
      ['production', 'a'],
      ['staging', 'c'],
      ['staging', 'a'],
    ];
    expect(asked.map(([environment, key]) => nameOf(environment, key))).toEqual(asked.map(([environment, key]) => `${environment} ${key}`));
  });
});

describe('the normalised query of a list entry', () => {
  test('when a query has parameters, then they are named sorted, and an undefined one not at all', () => {
    expect(normalisedQueryKey({ status: 'sold', limit: 10, after: undefined })).toBe('limit=10&status=sold');
  });

  test('when a value holds characters a query string gives meaning to, then they are percent-encoded and spell no other parameter', () => {
    expect(normalisedQueryKey({ tag: 'x&status=sold' })).toBe('tag=x%26status%3Dsold');
    expect(normalisedQueryKey({ tag: 'x', status: 'sold' })).toBe('status=sold&tag=x');
    expect(normalisedQueryKey({ name: 'a b%+é' })).toBe('name=a%20b%25%2B%C3%A9');
  });

  test('when a number is negative zero, then it is named as zero', () => {
    expect(normalisedQueryKey({ after: -0 })).toBe('after=0');
  });

  test('when a query has no parameters, then the key is empty', () => {
    expect(normalisedQueryKey({})).toBe('');
  });
});
