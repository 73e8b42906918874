import { entryNames } from './list-cache';

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
