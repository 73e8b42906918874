import { ApiError, toApiError } from './api-error';

describe('toApiError', () => {
  test('when given an ApiError, then it is returned unchanged', () => {
    const err = new ApiError('not_found', 'x');
    expect(toApiError(err)).toBe(err);
  });

  test('when given a bug, then 500 internal_error that reveals nothing', () => {
    expect(toApiError(new TypeError('secret detail')).toBody()).toEqual({ code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
  });

  test('when given an error marked as a client error by Express or body-parser, then a 4xx of our catalogue', () => {
    expect(toApiError(Object.assign(new URIError('bad escape'), { status: 400 })).toBody()).toEqual({ code: 'invalid_request', message: 'The request could not be understood.', status: 400 });
    expect(toApiError(Object.assign(new Error('too big'), { status: 413 })).code).toBe('payload_too_large');
  });
});
