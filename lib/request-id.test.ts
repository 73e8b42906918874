import type { IncomingMessage } from 'node:http';
import { createRequestIds, REQUEST_ID_SHAPE, requestIdOf } from './request-id';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withHeader = (value?: string) => ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

describe('request ids', () => {
  test('when ids are drawn across many batches, then each is a distinct version 4 UUID of the echoable shape', () => {
    const fresh = createRequestIds(4);
    const ids = Array.from({ length: 4000 }, fresh);
    for (const id of ids) {
      expect(id).toMatch(UUID_V4);
      expect(id).toMatch(REQUEST_ID_SHAPE);
    }
    expect(new Set(ids).size).toBe(4000);
  });

  test('when many ids are drawn, then every hex digit of the random part takes all sixteen values', () => {
    const fresh = createRequestIds();
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let n = 0; n < 2000; n++) [...fresh()].forEach((c, i) => seen[i]!.add(c));
    const sizes = seen.map((digits) => digits.size);
    // Dashes, the version digit, and the variant digit (8, 9, a or b) are fixed by the format.
    expect(sizes).toEqual(Array.from({ length: 36 }, (_, i) => ([8, 13, 18, 23].includes(i) ? 1 : i === 14 ? 1 : i === 19 ? 4 : 16)));
  });

  test('when two generators draw, then they do not repeat each other', () => {
    const a = createRequestIds();
    const b = createRequestIds();
    const ids = new Set([...Array.from({ length: 200 }, a), ...Array.from({ length: 200 }, b)]);
    expect(ids.size).toBe(400);
  });

  test("when the client sends a sane X-Request-Id, then it is kept; when it sends none or one of another shape, then a fresh one is made", () => {
    const fresh = () => 'fresh-id';
    expect(requestIdOf(withHeader('client-id.42:a_b'), fresh)).toBe('client-id.42:a_b');
    expect(requestIdOf(withHeader(), fresh)).toBe('fresh-id');
    expect(requestIdOf(withHeader('has space'), fresh)).toBe('fresh-id');
    expect(requestIdOf(withHeader('x'.repeat(129)), fresh)).toBe('fresh-id');
    expect(requestIdOf(withHeader())).toMatch(UUID_V4);
  });

  test('when the X-Request-Id holds an API key prefix in any case, then a fresh one is made; ids merely like one are kept', () => {
    const fresh = () => 'fresh-id';
    const secret = `${'Ab3_-'.repeat(8)}xyz`;
    for (const id of [`asg_prod_${secret}`, `ASG_STAG_${secret}`, 'trace.asg_prod_abc', `a:aSg_StAg_${secret}`]) {
      expect([id, requestIdOf(withHeader(id), fresh)]).toEqual([id, 'fresh-id']);
    }
    for (const id of ['0f5e8a52-3b7c-4d8e-9a41-2c6f1e7b9d30', 'abc_def.1:2-3', 'asg-prod-x', 'asg_test_abc', 'asg_prod']) {
      expect(requestIdOf(withHeader(id), fresh)).toBe(id);
    }
  });
});
