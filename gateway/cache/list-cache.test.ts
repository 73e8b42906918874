import { entryNames, fillSearch, normalisedQueryKey } from './list-cache';

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

describe('the query a fill asks', () => {
  test('when a query has parameters, then the fill asks them sorted, as its key names them', () => {
    const query = { status: 'sold', limit: 10, after: undefined };
    expect(normalisedQueryKey(query)).toBe('limit=10&status=sold');
    expect(fillSearch(query)).toBe('?limit=10&status=sold');
  });

  test('when a value holds characters a query string gives meaning to, then they are percent-encoded', () => {
    expect(fillSearch({ name: 'a&b=c d%+' })).toBe('?name=a%26b%3Dc%20d%25%2B');
  });

  test('when a query has no parameters, then the fill asks none', () => {
    expect(fillSearch({})).toBe('');
  });
});
