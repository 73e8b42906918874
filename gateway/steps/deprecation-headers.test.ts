import type { ApiOperation } from '../../openapi/operations';
import { headersSet, runStep, stepRequest } from '../../test/support/run-step';
import { deprecationHeaders } from './deprecation-headers';

const NOTICE = 'https://gateway.example/deprecations/get-pet';
const step = deprecationHeaders({ noticeUrl: NOTICE });

/** Runs the step on a request whose matched operation is `operation`; what it set on the response, and how it went on. */
async function run(operation: Partial<ApiOperation> | undefined) {
  const req = stepRequest({ apiPath: '/pets/3', ctx: { operation: operation as ApiOperation | undefined } });
  return { outcome: await runStep(step, req), headers: headersSet(req) };
}

describe('deprecation-headers step', () => {
  test('when the operation is deprecated, then its compiled Deprecation and Sunset values and a Link to the notice are set, and it goes on', async () => {
    // The values are formatted once when the document is compiled (openapi/operations.ts); the step only sends them.
    expect(await run({ deprecated: true, deprecationHeader: '@1764892800', sunsetHeader: 'Thu, 05 Dec 2030 00:00:00 GMT' })).toEqual({
      outcome: { next: 1 },
      headers: {
        Deprecation: '@1764892800',
        Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
        Link: `<${NOTICE}>; rel="deprecation"; type="text/html"`,
      },
    });
  });

  test('when a deprecated operation has no dates, then only the Link to the notice is set', async () => {
    expect(await run({ deprecated: true })).toEqual({ outcome: { next: 1 }, headers: { Link: `<${NOTICE}>; rel="deprecation"; type="text/html"` } });
  });

  test('when the operation is not deprecated, or no operation matched, then nothing is set and it goes on', async () => {
    expect(await run({ deprecated: false, sunsetHeader: 'Thu, 05 Dec 2030 00:00:00 GMT' })).toEqual({ outcome: { next: 1 }, headers: {} });
    expect(await run(undefined)).toEqual({ outcome: { next: 1 }, headers: {} });
  });
});
