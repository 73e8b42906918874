import { expectMatchesContract } from './support/contract';
import { testDatabaseKinds } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

describe.each(testDatabaseKinds())('the pet API through the gateway (%s)', (database) => {
  let gw: TestGateway;
  let dev: Developer;

  beforeAll(async () => {
    gw = await startTestGateway({ database });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(() => gw?.stop());

  const call = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(gw.url + path, { ...init, headers: { authorization: `Bearer ${init.key ?? dev.productionKey}`, ...(init.headers as Record<string, string>) } });
  const create = (prefix: string, pet: unknown, key = dev.productionKey) =>
    call(`${prefix}/pets`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(pet) });

  test('when a pet is added, then 201 with the Pet, status available by default, and Location under the public prefix', async () => {
    const res = await create('/v1', { name: 'Rex', categoryId: 2 });
    expect(res.status).toBe(201);
    const pet = await jsonOf(res);
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 2, status: 'available' });
    expect(res.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expectMatchesContract('createPet', 201, pet);
  });

  test('when a pet is added with a status, then that status is stored', async () => {
    const pet = await jsonOf(await create('/v1', { name: 'Tom', categoryId: 1, status: 'pending' }));
    expect(pet.status).toBe('pending');
    const got = await call(`/v1/pets/${pet.id}`);
    expect(await jsonOf(got)).toEqual(pet);
  });

  test('when limit is omitted, then at most 20 pets come back in ascending id order with a next link', async () => {
    for (let i = 0; i < 22; i++) expect((await create('/v1', { name: `bulk ${i}`, categoryId: 7 })).status).toBe(201);
    const res = await call('/v1/pets');
    expect(res.status).toBe(200);
    const pets = await jsonOf(res);
    expect(pets).toHaveLength(20);
    const ids = pets.map((p: { id: number }) => p.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expectMatchesContract('listPets', 200, pets);
    expect(res.headers.get('link')).toBe(`<${gw.url.replace('127.0.0.1', 'localhost')}/v1/pets?limit=20&after=${ids[19]}>; rel="next"`);
  });

  test('when the next link is followed, then the following page starts after the last id', async () => {
    const first = await call('/v1/pets?limit=5');
    const ids = (await jsonOf(first)).map((p: { id: number }) => p.id);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link')!)![1]!;
    const second = await fetch(next.replace('localhost', '127.0.0.1'), { headers: { authorization: `Bearer ${dev.productionKey}` } });
    expect(second.status).toBe(200);
    const secondIds = (await jsonOf(second)).map((p: { id: number }) => p.id);
    expect(secondIds).toHaveLength(5);
    expect(secondIds[0]).toBeGreaterThan(ids[4]);
  });

  test('when limit is given, then exactly that many pets come back (1 and 100 are allowed)', async () => {
    expect(await jsonOf(await call('/v1/pets?limit=1'))).toHaveLength(1);
    const all = await call('/v1/pets?limit=100');
    expect(all.status).toBe(200);
    const pets = await jsonOf(all);
    expect(pets.length).toBeGreaterThanOrEqual(23);
    expect(pets.length).toBeLessThanOrEqual(100);
  });

  test('when status is given, then only pets with that status are returned', async () => {
    await create('/v1', { name: 'Sold one', categoryId: 3, status: 'sold' });
    for (const status of ['available', 'pending', 'sold']) {
      const res = await call(`/v1/pets?status=${status}&limit=100`);
      expect(res.status).toBe(200);
      const pets = await jsonOf(res);
      expect(pets.length).toBeGreaterThan(0);
      for (const pet of pets) expect(pet.status).toBe(status);
    }
  });

  test('when an animal is fetched by id, then 200 with the Pet; an unknown id is 404', async () => {
    const pet = await jsonOf(await create('/v1', { name: 'Fetch me', categoryId: 4 }));
    const res = await call(`/v1/pets/${pet.id}`);
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toEqual(pet);
    expectMatchesContract('getPet', 200, body);
    const missing = await call('/v1/pets/999999999');
    expect(missing.status).toBe(404);
    const missingBody = await jsonOf(missing);
    expect(missingBody).toEqual({ code: 'not_found', message: 'Pet 999999999 was not found.', status: 404 });
    expectMatchesContract('getPet', 404, missingBody);
  });

  test('when a pet is added in staging, then it is never visible in production, and the reverse', async () => {
    const staged = await jsonOf(await create('/staging/v1', { name: 'Staging only', categoryId: 5 }, dev.stagingKey));
    expect(staged.id).toEqual(expect.any(Number));
    const prodNames = (await jsonOf(await call('/v1/pets?limit=100'))).map((p: { name: string }) => p.name);
    expect(prodNames).not.toContain('Staging only');
    const stagingList = await jsonOf(await call('/staging/v1/pets?limit=100', { key: dev.stagingKey }));
    expect(stagingList.map((p: { name: string }) => p.name)).toEqual(['Staging only']);
    const created = await create('/staging/v1', { name: 'Second', categoryId: 5 }, dev.stagingKey);
    expect(created.headers.get('location')).toMatch(/^\/staging\/v1\/pets\/\d+$/);
  });

  test('when the quickstart message is posted, then 202 with status queued', async () => {
    const res = await call('/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Hello' }) });
    expect(res.status).toBe(202);
    const body = await jsonOf(res);
    expect(body).toEqual({ id: expect.any(String), message: 'Hello', status: 'queued', createdAt: expect.any(String) });
    expectMatchesContract('createMessage', 202, body);
  });

  test('when the client sends a sane X-Request-Id, then it is echoed; an unsafe one is replaced', async () => {
    expect((await call('/v1/pets?limit=1', { headers: { 'x-request-id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    for (const unsafe of ['has spaces and "quotes"', 'x'.repeat(129), '<script>']) {
      const replaced = (await call('/v1/pets?limit=1', { headers: { 'x-request-id': unsafe } })).headers.get('x-request-id');
      expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  test('when the experimental store orders operation is called, then 404 with an Error body', async () => {
    const res = await call('/v1/store/orders');
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ code: 'not_found', message: 'Store orders are experimental and not available yet.', status: 404 });
  });
});
