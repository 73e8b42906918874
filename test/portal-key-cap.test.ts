import { loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../openapi/document';
import { createSchemaCompiler } from '../openapi/schema-compiler';
import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const portalDocument = loadOpenApiDocument(PORTAL_DOCUMENT_PATH);
const conflictSchema = (portalDocument.paths['/keys'] as { post: { responses: Record<string, { content: { 'application/json': { schema: unknown } } }> } }).post
  .responses['409']!.content['application/json'].schema;
const validateConflict = createSchemaCompiler(portalDocument).compile(conflictSchema);

const CAP_REACHED = { code: 'conflict', message: 'This account already has 3 active keys, the most it may hold; revoke one to create another.', status: 409 };

/**
 * Keys per account through the real gateway with MAX_KEYS_PER_ACCOUNT=3: the fourth active key
 * is a 409 the portal page shows, revoking one frees a slot, and parallel creates stop at the cap.
 */
describe.each(testDatabaseKinds())('keys per account on %s', (database) => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ database, env: { MAX_KEYS_PER_ACCOUNT: '3' } });
  });
  afterAll(() => gw?.stop());

  const createKey = (dev: Developer, name: string) =>
    fetch(`${gw.url}/portal/api/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: dev.cookie },
      body: JSON.stringify({ name }),
    });
  const activeKeys = async (dev: Developer) => {
    const res = await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } });
    const keys: Array<{ id: string; status: string }> = await jsonOf(res);
    return keys.filter((k) => k.status === 'active');
  };

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
});
