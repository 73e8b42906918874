import { RecordText } from './record-text';
import { newRecordColumns, type RecordColumns } from './request-log';

const texts = (c: RecordColumns, count: number) => Array.from({ length: count }, (_, i) => [c.requestIds[i], c.apiPaths[i], c.searches[i]]);

describe('the text of buffered request log records', () => {
  test('when records are put and restored, then each gets back its request id, path and query, and the next batch starts empty', () => {
    const text = new RecordText(4);
    const c = newRecordColumns(4);
    expect(text.put(c, 0, '0b6a6f2e-3c1d-4f7a-9b1e-2d3c4b5a6f70', '/pets', '')).toBe(true);
    expect(text.put(c, 1, 'client-id.7:x', '/pets/12', '?limit=5&status=sold')).toBe(true);
    expect(text.put(c, 2, 'r', '/', '?')).toBe(true);
    text.restore(c, 3);
    expect(texts(c, 3)).toEqual([
      ['0b6a6f2e-3c1d-4f7a-9b1e-2d3c4b5a6f70', '/pets', ''],
      ['client-id.7:x', '/pets/12', '?limit=5&status=sold'],
      ['r', '/', '?'],
    ]);

    const next = newRecordColumns(4);
    expect(text.put(next, 0, 'second', '/categories', '')).toBe(true);
    text.restore(next, 1);
    expect(texts(next, 1)).toEqual([['second', '/categories', '']]);
  });

  test('when a record does not fit, then put says so, restore leaves the strings kept in its slots, and the records around it come back whole', () => {
    const text = new RecordText(3); // 288 bytes
    const c = newRecordColumns(3);
    const long = 'x'.repeat(280);
    expect(text.put(c, 0, 'a', '/pets', '?limit=1')).toBe(true);
    expect(text.put(c, 1, long, '/pets', '')).toBe(false);
    expect(text.put(c, 2, 'b', '/pets/3', '')).toBe(true);
    text.restore(c, 3);
    expect(texts(c, 3)).toEqual([
      ['a', '/pets', '?limit=1'],
      [long, '/pets', ''],
      ['b', '/pets/3', ''],
    ]);
  });
});
