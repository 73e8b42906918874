import { ApiError } from '../lib/api-error';
import { readUsageDays } from './daily-usage-service';

describe('the days a usage read covers', () => {
  test('when days is absent, then it is 30', () => {
    expect(readUsageDays(undefined)).toBe(30);
  });

  test('when days is a whole number from 1 to 90, then it is that number', () => {
    expect(['1', '7', '30', '90', '007'].map(readUsageDays)).toEqual([1, 7, 30, 90, 7]);
  });

  test.each([['0'], ['91'], ['-1'], ['1.5'], ['1e1'], [' 7'], ['7 '], ['0x10'], [''], ['abc'], ['9999'], [['7', '8']], [{ a: '1' }]])(
    'when days is %j, then it is a 400 invalid_request naming days',
    (value) => {
      let thrown: unknown;
      try {
        readUsageDays(value);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).toBody()).toEqual({ code: 'invalid_request', message: 'days must be a whole number from 1 to 90.', status: 400 });
    },
  );
});
