import type { Database } from '../db/database';
import { loadOpenApiDocument } from '../openapi/document';
import { compileOperations } from '../openapi/operations';
import { startPetStore, type RunningPetStore } from '../petstore/open-pet-store';
import { jsonOf } from './support/http';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from './support/databases';
import { captureLogs } from './support/captured-logs';

const operations = compileOperations(loadOpenApiDocument());

describe.each(testDatabaseKinds())('embedded pet store on %s', (kind) => {
  let testDb: TestDatabase;
  let db: Database;
  let production: RunningPetStore;
  let staging: RunningPetStore;
  const { lines: errorLines, logger } = captureLogs<{ requestId?: string; code: string; method: string; path: string; err: { message: string }; msg: string }>('error');

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    db = await testDb.open();
    production = await startPetStore({ db, schema: 'petstore_production', operations, logger });
    staging = await startPetStore({ db, schema: 'petstore_staging', operations, logger });
  });
  afterAll(async () => {
    await production?.close();
    await staging?.close();
    await db?.close();
    await testDb?.destroy();
  });

  const post = (store: RunningPetStore, path: string, body: unknown) =>
    fetch(store.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('when a pet is created, then it is returned with an id, a Location and status available by default', async () => {
    const res = await post(production, '/pets', { name: '  Rex ', categoryId: 3 });
    expect(res.status).toBe(201);
    const pet = await jsonOf(res);
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 3, status: 'available' });
    expect(res.headers.get('location')).toBe(`/pets/${pet.id}`);
    const got = await fetch(`${production.url}/pets/${pet.id}`);
    expect(await jsonOf(got)).toEqual(pet);
  });

  test('when pets are listed page by page, then the Link cursor walks every pet once in ascending id order', async () => {
    const created: number[] = [];
    for (let i = 0; i < 7; i++) created.push((await jsonOf(await post(production, '/pets', { name: `p${i}`, categoryId: 1, status: 'sold' }))).id);
    const seen: number[] = [];
    let next: string | undefined = '/pets?limit=3&status=sold';
    while (next) {
      const res = await fetch(production.url + next);
      expect(res.status).toBe(200);
      seen.push(...(await jsonOf(res)).map((p: { id: number; status: string }) => (expect(p.status).toBe('sold'), p.id)));
      const link = res.headers.get('link');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
    }
    expect(seen).toEqual(created);
  });

  test('when a pet is created in staging, then production never sees it', async () => {
    const pet = await jsonOf(await post(staging, '/pets', { name: 'Only in staging', categoryId: 9 }));
    const same = await fetch(`${production.url}/pets/${pet.id}`);
    if (same.status === 200) expect((await jsonOf(same)).name).not.toBe('Only in staging');
    else expect(same.status).toBe(404);
    const names = (await jsonOf(await fetch(`${production.url}/pets?limit=100`))).map((p: { name: string }) => p.name);
    expect(names).not.toContain('Only in staging');
  });

  test('when a message is posted, then it is queued and stored', async () => {
    const res = await post(production, '/messages', { message: 'hello' });
    expect(res.status).toBe(202);
    const body = await jsonOf(res);
    expect(body).toEqual({ id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), message: 'hello', status: 'queued', createdAt: expect.any(String) });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
    const rows = await db.query('SELECT message, status FROM petstore_production.messages WHERE id = $1', [body.id]);
    expect(rows).toEqual([{ message: 'hello', status: 'queued' }]);
  });

  test('when an unknown pet is requested, then 404 with an Error body', async () => {
    const res = await fetch(`${production.url}/pets/987654321`);
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ code: 'not_found', message: 'Pet 987654321 was not found.', status: 404 });
  });

  test('when the body is invalid, then the store itself refuses it with 400', async () => {
    const res = await post(production, '/pets', { name: 'x', categoryId: 1, id: 5 });
    expect(res.status).toBe(400);
    expect(await jsonOf(res)).toEqual({ code: 'invalid_request', message: 'body field "id" is not allowed', status: 400 });
  });

  test('when the store fails on a request, then the client gets a bare 500 and the log one line with the cause and request id', async () => {
    // A real fault: the schema's pets table is gone.
    const broken = await startPetStore({ db, schema: 'petstore_broken', operations, logger });
    try {
      await db.query('DROP TABLE petstore_broken.pets');
      const res = await fetch(`${broken.url}/pets?limit=5`, { headers: { 'x-request-id': 'req-broken-1' } });
      expect(res.status).toBe(500);
      expect(await jsonOf(res)).toEqual({ code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
      expect(errorLines).toEqual([
        expect.objectContaining({ msg: 'pet store request failed', requestId: 'req-broken-1', code: 'internal_error', method: 'GET', path: '/pets' }),
      ]);
      expect(errorLines[0]!.err.message).toMatch(/pets/);
    } finally {
      await broken.close();
    }
  });

  test('when a failed request sends a key as its request id, then the store logs its line without the id', async () => {
    const broken = await startPetStore({ db, schema: 'petstore_broken_id', operations, logger });
    try {
      await db.query('DROP TABLE petstore_broken_id.pets');
      errorLines.length = 0;
      const key = 'asg_prod_' + 'k'.repeat(43);
      const res = await fetch(`${broken.url}/pets?limit=5`, { headers: { 'x-request-id': key.toUpperCase() } });
      expect(res.status).toBe(500);
      expect(errorLines).toEqual([expect.objectContaining({ msg: 'pet store request failed', code: 'internal_error', method: 'GET', path: '/pets' })]);
      expect(errorLines[0]!.requestId).toBeUndefined();
      expect(JSON.stringify(errorLines).toLowerCase()).not.toContain(key);
    } finally {
      await broken.close();
    }
  });

  const rowCount = async (table: string) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM petstore_production.${table}`))[0]!.n);

  test.each([
    ['a NUL in a name', 'pets', { name: 'R\u0000x', categoryId: 1 }, 'body field "name" must not contain control characters or unpaired surrogates'],
    ['a line feed in a name', 'pets', { name: 'R\nx', categoryId: 1 }, 'body field "name" must not contain control characters or unpaired surrogates'],
    ['an unpaired surrogate in a name', 'pets', { name: 'R\ud800x', categoryId: 1 }, 'body field "name" must not contain control characters or unpaired surrogates'],
    ['a NUL in a message', 'messages', { message: 'a\u0000b' }, 'body field "message" must not contain control characters (tab and line breaks aside) or unpaired surrogates'],
    ['a right-to-left override in a name', 'pets', { name: 'Rex\u202Egnp.exe', categoryId: 1 }, 'body field "name" must not contain bidirectional embedding, override or isolate characters'],
    ['a name of only a zero-width space', 'pets', { name: '\u200B', categoryId: 1 }, 'body field "name" must contain a visible character, not only spaces and invisible ones'],
    ['an isolate in a message', 'messages', { message: 'a\u2067b' }, 'body field "message" must not contain bidirectional embedding, override or isolate characters'],
    ['a message of only spaces and a word joiner', 'messages', { message: ' \u2060\n ' }, 'body field "message" must contain a visible character, not only spaces and invisible ones'],
  ])('when a text field holds %s, then the store refuses it with 400 and stores nothing', async (_label, table, body, message) => {
    // Without the check PostgreSQL refused the NUL (a 500), and stored the surrogate as U+FFFD.
    const before = await rowCount(table);
    const res = await post(production, `/${table}`, body);
    expect(await jsonOf(res)).toEqual({ code: 'invalid_request', message, status: 400 });
    expect(await rowCount(table)).toBe(before);
  });

  test('when a name has an emoji and a message has tabs and line breaks, then both are stored as sent', async () => {
    const pet = await jsonOf(await post(production, '/pets', { name: 'Rex 🐶 Ünal', categoryId: 1 }));
    const [stored] = await db.query<{ name: string }>('SELECT name FROM petstore_production.pets WHERE id = $1', [pet.id]);
    expect(stored!.name).toBe('Rex 🐶 Ünal');
    const text = 'line one\r\n\tline two\n';
    const queued = await jsonOf(await post(production, '/messages', { message: text }));
    expect(queued.message).toBe(text);
    const [row] = await db.query<{ message: string }>('SELECT message FROM petstore_production.messages WHERE id = $1', [queued.id]);
    expect(row!.message).toBe(text);
  });

  test('when a name joins emoji, marks right-to-left text or is spelled in NFD, then it is stored exactly as sent', async () => {
    // Joiners and direction marks inside visible text are legitimate; the store keeps the client's own spelling.
    for (const name of ['👨\u200D👩\u200D👧 family', 'שלום\u200F (2)', 'Rene\u0301e']) {
      const pet = await jsonOf(await post(production, '/pets', { name, categoryId: 1 }));
      const [stored] = await db.query<{ name: string }>('SELECT name FROM petstore_production.pets WHERE id = $1', [pet.id]);
      expect(stored!.name).toBe(name);
    }
  });

  test('when a filtered page is read, then the plan is an index range scan without a sort', async () => {
    // A tiny table may be scanned whole; disabling seq scans shows the plan a large table gets.
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const rows = await tx.query<{ 'QUERY PLAN': string }>(
        "EXPLAIN SELECT id, name, category_id, status FROM petstore_production.pets WHERE status = 'sold' AND id > 0 ORDER BY id LIMIT 21",
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index (Only )?Scan using pets_sold_id/);
    expect(plan).not.toMatch(/Sort/);
  });

  test('when one status is clustered at low ids, then a deep filtered page still reads only its own index', async () => {
    // The shape that made the planner walk the primary key past every other row: 20,000 pets,
    // the first 2,000 sold. Rolled back afterwards, so the other tests never see these rows.
    let plan = '';
    const rollback = new Error('roll back');
    await db
      .transaction(async (tx) => {
        await tx.query(
          `INSERT INTO petstore_production.pets (name, category_id, status)
           SELECT 'Pet ' || g, 1, CASE WHEN g <= 2000 THEN 'sold' ELSE 'available' END FROM generate_series(1, 20000) AS g`,
        );
        await tx.query('ANALYZE petstore_production.pets');
        const rows = await tx.query<{ 'QUERY PLAN': string }>(
          "EXPLAIN SELECT id, name, category_id, status FROM petstore_production.pets WHERE status = 'sold' AND id > 15000 ORDER BY id LIMIT 21",
        );
        plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        throw rollback;
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err;
      });
    expect(plan).toMatch(/Index (Only )?Scan using pets_sold_id/);
    expect(plan).not.toMatch(/Filter/);
  });
});
