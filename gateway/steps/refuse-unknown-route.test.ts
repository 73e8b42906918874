import type { ApiOperation, RouteMatch } from '../../openapi/operations';
import { refusalOf, runStep, stepRequest } from '../../test/support/run-step';
import { refuseUnknownRoute } from './refuse-unknown-route';

const SUNSET = new Date('2030-12-05T00:00:00Z');

/** The step at the instant `at`, run on a request whose route is `route`. */
function run(route: RouteMatch | undefined, { method = 'GET', apiPath = '/pets', at = SUNSET.getTime() - 1 } = {}) {
  return runStep(refuseUnknownRoute({ now: () => at }), stepRequest({ method, apiPath, ctx: { route } }));
}

const operation = (o: Partial<ApiOperation>): RouteMatch => ({ kind: 'operation', rawParams: ['3'], operation: { method: 'GET', pathTemplate: '/pets/{petId}', ...o } as ApiOperation });

describe('refuse-unknown-route step', () => {
  test('when no path matched, then it is refused with 404 naming the method and the public path', async () => {
    expect(refusalOf(await run({ kind: 'not_found' }, { method: 'GET', apiPath: '/owners' }))).toEqual({
      next: 0,
      body: { code: 'not_found', status: 404, message: 'No operation at GET /v1/owners.' },
      headers: {},
    });
  });

  test('when no route was matched at all, then it is refused with 404 too', async () => {
    expect(refusalOf(await run(undefined, { method: 'PUT', apiPath: '/x' })).body).toEqual({ code: 'not_found', status: 404, message: 'No operation at PUT /v1/x.' });
  });

  test('when the path exists but not with this method, then it is refused with 405 and an Allow header', async () => {
    expect(refusalOf(await run({ kind: 'method_not_allowed', allow: 'GET, HEAD, POST' }, { method: 'DELETE', apiPath: '/pets' }))).toEqual({
      next: 0,
      body: { code: 'method_not_allowed', status: 405, message: 'DELETE is not allowed on /v1/pets; allowed: GET, HEAD, POST.' },
      headers: { Allow: 'GET, HEAD, POST' },
    });
  });

  test('when an operation is before its sunset, or has none, then the request goes on', async () => {
    expect(await run(operation({ sunset: SUNSET }), { at: SUNSET.getTime() - 1 })).toEqual({ next: 1 });
    expect(await run(operation({}), { at: SUNSET.getTime() + 1e12 })).toEqual({ next: 1 });
  });

  test('when an operation has reached its sunset, then it is refused with 410 saying when it was removed and where to look', async () => {
    for (const at of [SUNSET.getTime(), SUNSET.getTime() + 86_400_000]) {
      expect(refusalOf(await run(operation({ sunset: SUNSET }), { apiPath: '/pets/3', at }))).toEqual({
        next: 0,
        body: {
          code: 'gone',
          status: 410,
          message: 'GET /v1/pets/{petId} was removed on Thu, 05 Dec 2030 00:00:00 GMT; see the deprecation notice in the Link header for its replacement.',
        },
        headers: {},
      });
    }
  });
});
