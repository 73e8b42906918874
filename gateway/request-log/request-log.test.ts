import { MAX_RECORDED_PATH, parseCursor, recordedPath } from './request-log';

describe('what a request log records of a request', () => {
  test('when the path and query are short, then they are recorded as sent, under the environment prefix', () => {
    expect(recordedPath('/staging/v1', '/pets', '?limit=5&status=sold')).toBe('/staging/v1/pets?limit=5&status=sold');
    expect(recordedPath('/v1', '/pets/3', '')).toBe('/v1/pets/3');
  });

  test('when they are longer than 512 characters, then the first 511 are kept and an ellipsis says so', () => {
    const path = recordedPath('/v1', '/pets', `?name=${'x'.repeat(2000)}`);
    expect(path).toHaveLength(MAX_RECORDED_PATH);
    expect(path).toBe(`/v1/pets?name=${'x'.repeat(MAX_RECORDED_PATH - 15)}…`);
  });

  test('when a client puts an API key in the query, then it is replaced before anything keeps it', () => {
    const key = `asg_prod_${'A1b2-_'.repeat(7)}x`;
    expect(recordedPath('/v1', '/pets', `?api_key=${key}&limit=2`)).toBe('/v1/pets?api_key=asg_prod_[redacted]&limit=2');
    expect(recordedPath('/staging/v1', `/pets/asg_stag_${'z'.repeat(43)}`, '')).toBe('/staging/v1/pets/asg_stag_[redacted]');
    expect(recordedPath('/v1', '/pets', '?q=asg_prod_short')).toBe('/v1/pets?q=asg_prod_short');
  });

  test('when a cursor is read, then only <ms>-<seq> is one', () => {
    expect(parseCursor('1764892800000-3')).toEqual({ ms: 1764892800000, seq: 3 });
    for (const bad of ['', '1764892800000', '-1', '1-', 'a-1', '1-1-1', '1234567890123456-0', ' 1-1']) expect(parseCursor(bad)).toBeUndefined();
  });
});
