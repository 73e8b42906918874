import { lastPerKey } from './last-per-key';

describe("the records a request log write sends of each key", () => {
  test('when keys interleave, then each key is one group of its slots in the order they ended, keys in the order they first ended', () => {
    expect(lastPerKey(['a', 'b', 'a', 'a', 'c', 'b'], 6, 10)).toEqual([[0, 2, 3], [1, 5], [4]]);
  });

  test('when a key has more records than a store keeps, then only its last ones are in its group, whatever the other keys have', () => {
    const keys = ['a', 'b', 'a', 'a', 'b', 'a', 'c'];
    expect(lastPerKey(keys, 7, 2)).toEqual([[3, 5], [1, 4], [6]]);
    expect(lastPerKey(keys, 5, 1)).toEqual([[3], [4]]);
  });

  test('when records have no key or there are none, then those without one group together and an empty batch has no group', () => {
    expect(lastPerKey([undefined, 'a', undefined], 3, 5)).toEqual([[0, 2], [1]]);
    expect(lastPerKey(['a'], 0, 5)).toEqual([]);
  });
});
