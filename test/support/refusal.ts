import { ApiError } from '../../lib/api-error';

/** The ApiError a promise is refused with; fails the test when it settles any other way. */
export async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}
