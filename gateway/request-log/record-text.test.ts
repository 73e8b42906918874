import { RecordText } from './record-text';
import { newRecordColumns, type RecordColumns } from './request-log';

/** Records 0 to count - 1 of `from`, restored into fresh columns, as [request id, path, query]. */
function restored(text: RecordText, from: RecordColumns, slots: number[]) {
  const into = newRecordColumns(slots.length);
  slots.forEach((i, at) => text.restoreInto(i, from, into, at));
  return slots.map((_, at) => [into.requestIds[at], into.apiPaths[at], into.searches[at]]);
}

describe('the text of buffered request log records', () => {
  test('when records are put and restored, in any order and any of them, then each gets back its request id, path and query', () => {
    const text = new RecordText(4);
    const c = newRecordColumns(4);
    expect(text.put(c, 0, '0b6a6f2e-3c1d-4f7a-9b1e-2d3c4b5a6f70', '/pets', '')).toBe(true);
    expect(text.put(c, 1, 'client-id.7:x', '/pets/12', '?limit=5&status=sold')).toBe(true);
    expect(text.put(c, 2, 'r', '/', '?')).toBe(true);
    expect(restored(text, c, [0, 1, 2])).toEqual([
      ['0b6a6f2e-3c1d-4f7a-9b1e-2d3c4b5a6f70', '/pets', ''],
      ['client-id.7:x', '/pets/12', '?limit=5&status=sold'],
      ['r', '/', '?'],
    ]);
    expect(restored(text, c, [2, 1])).toEqual([
      ['r', '/', '?'],
      ['client-id.7:x', '/pets/12', '?limit=5&status=sold'],
    ]);
    // The columns of the slots themselves hold none of them: they were kept as bytes.
    expect([c.requestIds[0], c.apiPaths[1], c.searches[1]]).toEqual([undefined, undefined, undefined]);
  });

  test('when the text is cleared, then the next records start at the beginning again', () => {
    const text = new RecordText(1); // 96 bytes: a second record of 17 fits only once the first 80 are gone
    const c = newRecordColumns(1);
    expect(text.put(c, 0, 'a'.repeat(73), '/pets', '?x')).toBe(true);
    text.clear();
    const next = newRecordColumns(1);
    expect(text.put(next, 0, 'second', '/categories', '')).toBe(true);
    expect(restored(text, next, [0])).toEqual([['second', '/categories', '']]);
  });

  test('when a record does not fit, then put says so and keeps its strings in its slots, and the records around it come back whole', () => {
    const text = new RecordText(3); // 288 bytes
    const c = newRecordColumns(3);
    const long = 'x'.repeat(280);
    expect(text.put(c, 0, 'a', '/pets', '?limit=1')).toBe(true);
    expect(text.put(c, 1, long, '/pets', '')).toBe(false);
    expect(text.put(c, 2, 'b', '/pets/3', '')).toBe(true);
    expect([c.requestIds[1], c.apiPaths[1], c.searches[1]]).toEqual([long, '/pets', '']);
    expect(restored(text, c, [0, 1, 2])).toEqual([
      ['a', '/pets', '?limit=1'],
      [long, '/pets', ''],
      ['b', '/pets/3', ''],
    ]);
  });
});
