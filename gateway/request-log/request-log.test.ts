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

  describe('when a key in the path or query is sent percent-encoded or in another case', () => {
    const secret = `${'A1b2-_'.repeat(7)}x`;
    const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');

    test('when its prefix is percent-encoded, then it is replaced, under its environment\'s prefix', () => {
      expect(recordedPath('/v1', '/pets', `?x=asg%5Fprod%5F${secret}&y=ASG_PROD_${secret}`)).toBe('/v1/pets?x=asg_prod_[redacted]&y=asg_prod_[redacted]');
      expect(recordedPath('/v1', '/pets', `?x=asg%5fstag%5f${secret}`)).toBe('/v1/pets?x=asg_stag_[redacted]');
    });

    test('when the whole key or only its secret is percent-encoded, then it is replaced', () => {
      expect(recordedPath('/v1', '/pets', `?k=${percentEncoded(`asg_prod_${secret}`)}&limit=2`)).toBe('/v1/pets?k=asg_prod_[redacted]&limit=2');
      expect(recordedPath('/v1', '/pets', `?k=asg_stag_${percentEncoded(secret).toLowerCase()}`)).toBe('/v1/pets?k=asg_stag_[redacted]');
    });

    test('when its prefix is upper-case or of mixed case, then it is replaced', () => {
      expect(recordedPath('/v1', '/pets', `?k=ASG_PROD_${secret}`)).toBe('/v1/pets?k=asg_prod_[redacted]');
      expect(recordedPath('/v1', '/pets', `?k=Asg_StAg_${secret}&limit=2`)).toBe('/v1/pets?k=asg_stag_[redacted]&limit=2');
      expect(recordedPath('/v1', '/pets', `?k=aSg%5FProd%5f${secret}`)).toBe('/v1/pets?k=asg_prod_[redacted]');
    });

    test('when the path holds it, then it is replaced there too', () => {
      expect(recordedPath('/v1', `/pets/ASG_PROD_${secret}`, '')).toBe('/v1/pets/asg_prod_[redacted]');
      expect(recordedPath('/staging/v1', `/pets/asg%5Fstag%5F${secret}`, '?limit=1')).toBe('/staging/v1/pets/asg_stag_[redacted]?limit=1');
    });

    test('when what follows a prefix decodes to characters no key has, then nothing is replaced', () => {
      for (const search of ['?q=asg_prod_abcd%2Befgh%2Bijkl', '?q=ASG%5FPROD%5Fab%2Bcd%20efgh%2Bij', '?q=asg_prod_abc+defgh+ijklm', `?q=asg%5Fprod%2F${secret}`]) {
        expect(recordedPath('/v1', '/pets', search)).toBe(`/v1/pets${search}`);
      }
    });

    test('when an escape is malformed, then nothing throws and the query is recorded as sent', () => {
      for (const search of ['?q=%zz&r=%&s=asg_prod_%', `?q=asg%5Fprod%5F%zz${secret}`, `?q=asg%5Fprod%5_${secret}`, '?q=%', '?q=%E0%A4%A']) {
        expect(recordedPath('/v1', '/pets', search)).toBe(`/v1/pets${search}`);
      }
    });

    test('when a query is ordinary, with escapes or words near a prefix, then it is recorded as sent', () => {
      for (const search of ['?name=Rasga%20dog&tag=ASGARD', '?name=caf%C3%A9&status=sold', '?q=asg_&r=ASG_PROD', '?q=asg_prod_[redacted]']) {
        expect(recordedPath('/v1', '/pets', search)).toBe(`/v1/pets${search}`);
      }
    });
  });

  test('when a cursor is read, then only <ms>-<seq> is one', () => {
    expect(parseCursor('1764892800000-3')).toEqual({ ms: 1764892800000, seq: 3 });
    for (const bad of ['', '1764892800000', '-1', '1-', 'a-1', '1-1-1', '1234567890123456-0', ' 1-1']) expect(parseCursor(bad)).toBeUndefined();
  });
});
