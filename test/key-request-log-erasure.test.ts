import Redis from 'ioredis';
import { adminClient, ADMIN_ENV } from './support/admin-client';
import { redisTestUrl } from './support/databases';
import { signUpDeveloper, startGatewayPair, type GatewayPair, type TestGateway } from './support/gateway-harness';
import { until } from './support/until';
import { startRecordingUpstream } from './support/upstream-double';

const PET = { id: 1, name: 'Slowpoke', categoryId: 1, status: 'available' };

/** An account erased through one gateway while another is still answering a request of its key, the request's record written after the erasure. */
describe('a request in flight when its account is erased (two gateways sharing Redis)', () => {
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let pair: GatewayPair | undefined;
  let a: TestGateway;
  let b: TestGateway;
  let redis: Redis;
  // The upstream holds /pets/1 until the test lets it answer.
  const held: Array<() => void> = [];

  beforeAll(async () => {
    upstream = await startRecordingUpstream((req, res) => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(PET));
      };
      if (req.url === '/pets/1') held.push(answer);
      else answer();
    });
    redis = new Redis(redisTestUrl());
    pair = await startGatewayPair({ env: { ...ADMIN_ENV, PRODUCTION_UPSTREAM: upstream.url } });
    ({ a, b } = pair);
  }, 60_000);
  afterAll(async () => {
    held.splice(0).forEach((answer) => answer());
    await pair?.stop();
    await upstream?.close();
    redis?.disconnect();
  });

  test('when it finishes after the erasure, then no record of it is kept in Redis, whichever process wrote it', async () => {
    const dev = await signUpDeveloper(a.url);
    const { id: keyId, key } = await dev.issueKey({ name: 'erased while busy' });
    const stream = `${pair!.prefix}reqlog-v2:${keyId}`;
    const inFlight = fetch(`${b.url}/v1/pets/1`, { headers: { authorization: `Bearer ${key}` } });
    await until('the request to reach the upstream', () => held.length === 1);

    expect((await adminClient(a.adminUrl!).delete(`/admin/v1/accounts/${dev.accountId}`)).status).toBe(204);
    held.shift()!();
    const res = await inFlight;
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    // A read on B writes what B has buffered first, the erased key's record with it.
    const other = await signUpDeveloper(b.url);
    const { id: otherKeyId } = await other.issueKey({ name: 'reader' });
    expect((await fetch(`${b.url}/portal/api/keys/${otherKeyId}/requests`, { headers: { cookie: other.cookie } })).status).toBe(200);
    expect(await redis.xrange(stream, '-', '+')).toEqual([]);
    expect(await redis.exists(stream)).toBe(0);
  });
});
