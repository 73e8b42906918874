import { loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../openapi/document';
import { createSchemaCompiler } from '../openapi/schema-compiler';
import { expectMatchesPortalContract } from './support/contract';
import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const portalDocument = loadOpenApiDocument(PORTAL_DOCUMENT_PATH);
const conflictSchema = (portalDocument.paths['/keys'] as { post: { responses: Record<string, { content: { 'application/json': { schema: unknown } } }> } }).post
  .responses['409']!.content['application/json'].schema;
const validateConflict = createSchemaCompiler(portalDocument).compile(conflictSchema);

const CAP_REACHED = { code: 'conflict', message: 'This account already has 3 active keys, the most it may hold; revoke one to create another.', status: 409 };
const CAP_REACHED_ROLL = { ...CAP_REACHED, message: 'This account already has 3 active keys, the most it may hold; roll with no overlap, or revoke a key first.' };
const HOUR = 3_600_000;

/** A secret and the environment it works in. */
type Secret = { key: string; environment: string };

/**
 * Keys per account through the real gateway with MAX_KEYS_PER_ACCOUNT=3: the fourth active key
 * is a 409 the portal page shows, revoking one frees a slot, and parallel creates stop at the cap.
 * A rolled key counts while its overlap lets it work, so rolls cannot pass the cap either.
 */
describe.each(testDatabaseKinds())('keys per account on %s', (database) => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { MAX_KEYS_PER_ACCOUNT: '3' } });
  });
  afterEach(() => gw.clock.reset());
  afterAll(() => gw?.stop());

  const createKey = (dev: Developer, name: string) =>
    fetch(`${gw.url}/portal/api/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: dev.cookie },
      body: JSON.stringify({ name }),
    });
  const roll = (dev: Developer, id: string, overlap: string) =>
    fetch(`${gw.url}/portal/api/keys/${id}/roll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: dev.cookie },
      body: JSON.stringify({ overlap }),
    });
  const keysOf = (dev: Developer): Secret[] => [
    { key: dev.productionKey, environment: 'production' },
    { key: dev.stagingKey, environment: 'staging' },
  ];
  /** How many of the secrets the gateway still lets through. */
  const working = async (secrets: Secret[]) => {
    let count = 0;
    for (const { key, environment } of secrets) {
      const res = await fetch(`${gw.url}${environment === 'staging' ? '/staging' : ''}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      if (res.status === 200) count++;
    }
    return count;
  };
  const listKeys = async (dev: Developer): Promise<Array<{ id: string; name: string; status: string }>> =>
    jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
  const activeKeys = async (dev: Developer) => (await listKeys(dev)).filter((k) => k.status === 'active');

  test('when an account holds 3 active keys, then creating a fourth is 409 conflict saying the limit and how to free a slot, and no key is made', async () => {
    const dev = await signUpDeveloper(gw.url); // two keys
    expect((await createKey(dev, 'third')).status).toBe(201);
    const res = await createKey(dev, 'fourth');
    expect(res.status).toBe(409);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await jsonOf(res);
    expect(body).toEqual(CAP_REACHED);
    expect(validateConflict(body)).toBe(true);
    expect(await activeKeys(dev)).toHaveLength(3);
  });

  test('when one of the 3 is revoked, then one more can be created, and then no further', async () => {
    const dev = await signUpDeveloper(gw.url);
    const third = await jsonOf(await createKey(dev, 'third'));
    await dev.revoke(third.id);
    expect((await createKey(dev, 'replacement')).status).toBe(201);
    expect(await jsonOf(await createKey(dev, 'one too many'))).toEqual(CAP_REACHED);
  });

  test('when 8 creates for one account arrive at once, then exactly one fills the last slot and 7 are 409 conflict', async () => {
    const dev = await signUpDeveloper(gw.url);
    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => createKey(dev, `parallel ${i}`)));
    const bodies = await Promise.all(responses.map((r) => jsonOf(r)));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(bodies.filter((b) => b.code === 'conflict')).toEqual(Array.from({ length: 7 }, () => CAP_REACHED));
    expect(await activeKeys(dev)).toHaveLength(3);
  });

  test('when an account holding 3 keys rolls one, and then its successor, with a 7 d overlap, then each roll is 409 conflict as a create is, and never more than 3 secrets work', async () => {
    const dev = await signUpDeveloper(gw.url);
    const third = await dev.issueKey({ name: 'third' });
    const secrets = [...keysOf(dev), { key: third.key, environment: 'production' }];
    let current = third.id;
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const res = await roll(dev, current, '7d');
      const body = await jsonOf(res);
      answers.push([res.status, body]);
      if (res.status === 201) {
        secrets.push(body);
        current = body.id;
      } else {
        expectMatchesPortalContract('rollApiKey', 409, body);
      }
      expect(await working(secrets)).toBeLessThanOrEqual(3);
    }
    expect(answers).toEqual(Array.from({ length: 3 }, () => [409, CAP_REACHED_ROLL]));
    expect(await working(secrets)).toBe(3);
    expect(await activeKeys(dev)).toHaveLength(3);
    expect(await jsonOf(await createKey(dev, 'one too many'))).toEqual(CAP_REACHED);
  });

  test('when an account holding 3 keys rolls one with no overlap, then the roll succeeds and the old secret stops, and the successor too can only be rolled with no overlap', async () => {
    const dev = await signUpDeveloper(gw.url);
    const third = await dev.issueKey({ name: 'third' });
    const res = await roll(dev, third.id, 'none');
    expect(res.status).toBe(201);
    const fresh = await jsonOf(res);
    const secrets = [...keysOf(dev), { key: third.key, environment: 'production' }, fresh];
    expect(await working([{ key: third.key, environment: 'production' }])).toBe(0);
    expect(await working(secrets)).toBe(3);

    expect(await jsonOf(await roll(dev, fresh.id, '1h'))).toEqual(CAP_REACHED_ROLL);
    const again = await roll(dev, fresh.id, 'none');
    expect(again.status).toBe(201);
    secrets.push(await jsonOf(again));
    expect(await working(secrets)).toBe(3);
    expect(await activeKeys(dev)).toHaveLength(3);
  });

  test('when a roll\'s overlap ends, then the old key no longer counts and its slot can be used again', async () => {
    const dev = await signUpDeveloper(gw.url); // two keys: room for one more
    const production = (await listKeys(dev)).find((k) => k.name === 'production key')!;
    const res = await roll(dev, production.id, '1h');
    expect(res.status).toBe(201);
    const fresh = await jsonOf(res);
    expect(await working([...keysOf(dev), fresh])).toBe(3);
    expect(await jsonOf(await createKey(dev, 'during the overlap'))).toEqual(CAP_REACHED);

    gw.clock.set(new Date(new Date(fresh.createdAt).getTime() + HOUR + 1000));
    expect(await working([...keysOf(dev), fresh])).toBe(2);
    expect((await createKey(dev, 'after the overlap')).status).toBe(201);
    expect(await jsonOf(await createKey(dev, 'one too many'))).toEqual(CAP_REACHED);
  });
});
