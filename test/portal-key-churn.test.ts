import Redis from 'ioredis';
import { loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../openapi/document';
import { answerOf, servedContract } from './support/contract';
import { redisTestUrl } from './support/databases';
import { signUpDeveloper, startGatewayPair, startTestGateway, type Developer, type GatewayPair, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const portalContract = servedContract(loadOpenApiDocument(PORTAL_DOCUMENT_PATH));
const SPENT = { code: 'rate_limited', message: 'This account has created or rolled 4 keys in 24 hours, the most it may; try again in 24 hours.', status: 429 };
const DAY_SECONDS = 24 * 60 * 60;

const createKey = (url: string, dev: Developer, name: string) =>
  fetch(`${url}/portal/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url, cookie: dev.cookie },
    body: JSON.stringify({ name }),
  });
const rollKey = (url: string, dev: Developer, id: string) =>
  fetch(`${url}/portal/api/keys/${id}/roll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url, cookie: dev.cookie },
    body: JSON.stringify({ overlap: 'none' }),
  });
const listKeys = async (url: string, dev: Developer): Promise<Array<{ id: string; name: string; status: string; rolledTo: string | null }>> =>
  jsonOf(await fetch(`${url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));

/** Creates a key through `url` and revokes it at once, as the churn the limit is for. */
async function createAndRevoke(url: string, dev: Developer, name: string): Promise<void> {
  const res = await createKey(url, dev, name);
  expect(res.status).toBe(201);
  await dev.revoke((await jsonOf(res)).id);
}

/** Asserts the refusal of a spent allowance: the exact Error body, a day's Retry-After, and an answer the portal contract declares. */
async function expectSpent(res: Response, operationId: string): Promise<void> {
  const answer = await answerOf(res);
  expect(answer.status).toBe(429);
  expect(JSON.parse(answer.body)).toEqual(SPENT);
  const retryAfter = Number(answer.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(DAY_SECONDS - 120);
  expect(retryAfter).toBeLessThanOrEqual(DAY_SECONDS);
  expect(answer.headers['cache-control']).toBe('no-store');
  portalContract.check(operationId, answer);
}

/**
 * New keys per account through the real gateway with MAX_NEW_KEYS_PER_DAY=4 and MAX_KEYS_PER_ACCOUNT=3:
 * revoking a key frees its place among the active keys, but creating and rolling keys stops at the
 * day's allowance, since each key's request log outlives its revocation by a day.
 */
describe('new keys per account and day', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ env: { MAX_NEW_KEYS_PER_DAY: '4', MAX_KEYS_PER_ACCOUNT: '3' } });
  });
  afterAll(() => gw?.stop());

  test('when an account has created and revoked keys up to its allowance, then the next create and a roll are 429 rate_limited with Retry-After, nothing is made, and another account is not affected', async () => {
    const dev = await signUpDeveloper(gw.url); // two keys
    await createAndRevoke(gw.url, dev, 'churn 1');
    await createAndRevoke(gw.url, dev, 'churn 2');
    const before = await listKeys(gw.url, dev);
    expect(before.filter((k) => k.status === 'active')).toHaveLength(2);

    await expectSpent(await createKey(gw.url, dev, 'one too many'), 'createApiKey');
    const production = before.find((k) => k.name === 'production key')!;
    await expectSpent(await rollKey(gw.url, dev, production.id), 'rollApiKey');
    expect(await listKeys(gw.url, dev)).toEqual(before);
    const stillWorks = await fetch(`${gw.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
    expect(stillWorks.status).toBe(200);
    await stillWorks.arrayBuffer();

    const other = await signUpDeveloper(gw.url);
    expect((await createKey(gw.url, other, 'unaffected')).status).toBe(201);
  });

  test('when creates are refused for another reason (a bad name, the cap on active keys), then they cost nothing of the allowance', async () => {
    const dev = await signUpDeveloper(gw.url); // two keys: two of the four
    const badName = await createKey(gw.url, dev, '');
    expect(badName.status).toBe(400);
    await badName.arrayBuffer();
    const third = await createKey(gw.url, dev, 'third');
    expect(third.status).toBe(201);
    const overTheCap = await createKey(gw.url, dev, 'over the cap');
    expect(overTheCap.status).toBe(409);
    await overTheCap.arrayBuffer();
    await dev.revoke((await jsonOf(third)).id);
    await createAndRevoke(gw.url, dev, 'fourth');
    await expectSpent(await createKey(gw.url, dev, 'fifth'), 'createApiKey');
  });
});

/** Two gateways on one database and one Redis, as behind a load balancer: one allowance per account for both. */
describe('new keys per account and day, shared by two gateways through Redis', () => {
  let pair: GatewayPair;

  beforeAll(async () => {
    pair = await startGatewayPair({ env: { MAX_NEW_KEYS_PER_DAY: '4' } });
  });
  afterAll(() => pair?.stop());

  test('when an account spends its allowance across both gateways, then both refuse its next create and roll, and the count is one Redis key that expires within a day', async () => {
    const { a, b, prefix } = pair;
    const dev = await signUpDeveloper(a.url); // two keys, through A
    await createAndRevoke(b.url, dev, 'churn through B');
    await createAndRevoke(a.url, dev, 'churn through A');
    const production = (await listKeys(a.url, dev)).find((k) => k.name === 'production key')!;
    for (const gw of [a, b]) {
      await expectSpent(await createKey(gw.url, dev, 'one too many'), 'createApiKey');
      await expectSpent(await rollKey(gw.url, dev, production.id), 'rollApiKey');
    }

    const redis = new Redis(redisTestUrl());
    try {
      expect(await redis.keys(`${prefix}new_keys_acct:*`)).toEqual([`${prefix}new_keys_acct:${dev.accountId}`]);
      const ttl = await redis.pttl(`${prefix}new_keys_acct:${dev.accountId}`);
      expect(ttl).toBeGreaterThan((DAY_SECONDS - 120) * 1000);
      expect(ttl).toBeLessThanOrEqual(DAY_SECONDS * 1000);
    } finally {
      redis.disconnect();
    }
    expect((await createKey(b.url, await signUpDeveloper(b.url), 'another account')).status).toBe(201);
  });
});
