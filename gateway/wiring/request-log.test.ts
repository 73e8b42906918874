import { captureLogs } from '../../test/support/captured-logs';
import type { Config } from '../config';
import { ResponseHeaders } from '../http/response-headers';
import type { RequestContext } from '../pipeline/pipeline';
import type { Cleanup } from './defer';
import { createRequestLog } from './request-log';
import type { Stores } from './stores';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');

/** A finished request of `keyId`, as the pipeline leaves its context. */
function finished(keyId: string, requestId: string): RequestContext {
  return { requestId, environment: 'production', prefix: '/v1', apiPath: '/pets/1', search: '', startedAt: performance.now() - 5, headers: new ResponseHeaders(), sharedFill: false, keyId };
}

describe('the request log without Redis, when an account is erased', () => {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  test('when its key had a request buffered and another in flight, then neither is kept, while other keys keep theirs', async () => {
    const { logger } = captureLogs('warn');
    const log = createRequestLog({ config: {} as Config, logger, now: () => new Date(T0), defer: (cleanup) => cleanups.push(cleanup) }, {} as Stores);
    log.writer.record(finished('key_erased', 'buffered'), 'GET', 200, 5);
    await log.forget(['key_erased']);
    // The request in flight at the erasure ends after it, and is written with another key's.
    log.writer.record(finished('key_erased', 'in flight'), 'GET', 200, 5);
    log.writer.record(finished('key_other', 'other'), 'GET', 200, 5);
    expect((await log.read('key_erased', { limit: 10 })).requests).toEqual([]);
    expect((await log.read('key_other', { limit: 10 })).requests.map((r) => r.requestId)).toEqual(['other']);
  });
});
