import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ERROR_STATUS } from '../lib/api-error';
import { createAdminHandlers } from '../gateway/admin/admin-handlers';
import { ADMIN_DOCUMENT_PATH, loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../openapi/document';
import { environmentPrefixes } from '../openapi/environments';
import { compileOperations } from '../openapi/operations';
import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');

describe('the OpenAPI documents', () => {
  const doc = loadOpenApiDocument();
  type Op = { operationId: string; security?: unknown[]; deprecated?: boolean; description?: string; tags?: string[]; parameters?: Array<{ description?: string }>; responses: Record<string, { description?: string; $ref?: string }> } & Record<string, unknown>;
  const operations = Object.values(doc.paths).flatMap((item) => Object.values(item) as Op[]);

  test('when linted with Redocly (recommended rules plus ours), then the three documents pass with no problems', async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      [join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', 'openapi/animal-store.yaml', 'openapi/portal.yaml', 'openapi/admin.yaml', '--config', 'openapi/redocly.yaml', '--format', 'json'],
      { cwd: ROOT, maxBuffer: 10 * 1024 * 1024 },
    ).catch((err: { stdout: string; stderr: string }) => {
      throw new Error(`redocly lint failed:\n${err.stdout}\n${err.stderr}`);
    });
    // One JSON report per document, printed back to back.
    const reports = stdout
      .trim()
      .split(/\}\s*(?=\{\s*"totals")/)
      .map((part, i, all) => JSON.parse(i < all.length - 1 ? `${part}}` : part) as { totals: { errors: number; warnings: number }; problems: unknown[] });
    expect(reports).toHaveLength(3);
    for (const report of reports) expect({ totals: report.totals, problems: report.problems }).toMatchObject({ totals: { errors: 0, warnings: 0 }, problems: [] });
    expect(stderr).not.toMatch(/error/i);
  }, 60_000);

  test('when linted with Spectral (spectral:oas), then the three documents pass with no problems', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'node_modules/@stoplight/spectral-cli/dist/index.js'), 'lint', '--fail-severity=hint', '--ruleset', '.spectral.yaml', '--format', 'json', 'openapi/animal-store.yaml', 'openapi/portal.yaml', 'openapi/admin.yaml'],
      { cwd: ROOT, maxBuffer: 10 * 1024 * 1024 },
    ).catch((err: { stdout: string; stderr: string }) => {
      throw new Error(`spectral lint failed:\n${err.stdout}\n${err.stderr}`);
    });
    // The JSON report is followed by a plain summary line on the same stream.
    expect(JSON.parse(stdout.replace(/No results.*$/s, ''))).toEqual([]);
  }, 60_000);

  test('when read, then the public document has version 1.0.0 and the production and staging servers', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([
      { url: '/v1', description: 'Production', 'x-environment': 'production' },
      expect.objectContaining({ url: '/staging/v1', 'x-environment': 'staging' }),
    ]);
    expect(environmentPrefixes(doc)).toEqual({ production: '/v1', staging: '/staging/v1' });
  });

  test('when compiled, then listPets is the cached list and createPet invalidates it, and no other operation touches the cache', () => {
    const rules = compileOperations(doc).operations.map((o) => [o.operationId, o.cache, o.invalidatesCache]);
    expect(rules).toEqual(
      expect.arrayContaining([
        ['listPets', 'list', []],
        ['createPet', undefined, ['listPets']],
        ['getPet', undefined, []],
        ['createMessage', undefined, []],
        ['listOrders', undefined, []],
      ]),
    );
  });

  test('when read, then every operation requires the bearer key and describes every parameter and response', () => {
    expect(operations.map((o) => o.operationId).sort()).toEqual(['createMessage', 'createPet', 'getPet', 'listOrders', 'listPets']);
    for (const op of operations) {
      expect(op.security).toEqual([{ bearerAuth: [] }]);
      expect(op.responses['401']).toBeDefined();
      for (const p of op.parameters ?? []) expect(p.description).toBeTruthy();
    }
  });

  test('when read, then getPet is deprecated with its sunset, createMessage is beta and the Store group is experimental', () => {
    const byId = Object.fromEntries(operations.map((o) => [o.operationId, o]));
    expect(byId.getPet).toMatchObject({ deprecated: true, 'x-sunset': '2030-12-05T00:00:00Z' });
    expect(byId.getPet!.description).toContain('5 December 2030');
    expect(byId.createMessage!['x-stability']).toBe('beta');
    expect(byId.listOrders).toMatchObject({ tags: ['Store'], 'x-stability': 'experimental' });
    expect((doc.tags as Array<{ name: string }>).map((t) => t.name)).toEqual(expect.arrayContaining(['Pets', 'Store']));
  });

  test('when read, then the Error schema lists every code the public API can answer with', () => {
    const portalOnly = ['conflict', 'weak_password'];
    const documented = (doc.components!.schemas!.Error as { properties: { code: { enum: string[] } } }).properties.code.enum;
    expect([...documented].sort()).toEqual(Object.keys(ERROR_STATUS).filter((c) => !portalOnly.includes(c)).sort());
  });

  test('when the admin document is read, then its operations are the admin handlers, each needs the token and answers 401, and its Error codes are the catalogue\'s but those it never answers', () => {
    const admin = loadOpenApiDocument(ADMIN_DOCUMENT_PATH);
    const adminOps = compileOperations(admin).operations;
    expect(adminOps.map((o) => o.operationId).sort()).toEqual(Object.keys(createAdminHandlers({} as never)).sort());
    expect(admin.security).toEqual([{ adminToken: [] }]);
    for (const item of Object.values(admin.paths)) {
      for (const [method, op] of Object.entries(item)) if (method !== 'parameters') expect(Object.keys((op as Op).responses)).toContain('401');
    }
    const codes = (admin.components!.schemas!.Error as { properties: { code: { enum: string[] } } }).properties.code.enum;
    const notAdmin = ['weak_password', 'forbidden', 'gone', 'bad_gateway', 'gateway_timeout', 'quota_exceeded'];
    expect([...codes].sort()).toEqual(Object.keys(ERROR_STATUS).filter((c) => !notAdmin.includes(c)).sort());
  });

  test('when the portal document is read, then it documents the portal JSON API', () => {
    const portal = loadOpenApiDocument(PORTAL_DOCUMENT_PATH);
    expect(Object.keys(portal.paths).sort()).toEqual(['/keys', '/keys/{id}', '/keys/{id}/requests', '/keys/{id}/roll', '/keys/{id}/usage', '/login', '/logout', '/me', '/plan', '/signup', '/usage']);
  });

  test("when the portal document describes a logged request's code, then it offers every code of the public API's Error", () => {
    const portal = loadOpenApiDocument(PORTAL_DOCUMENT_PATH);
    const logged = (portal.components!.schemas!.LoggedRequest as { properties: { code: { enum: Array<string | null> } } }).properties.code.enum;
    const publicCodes = (doc.components!.schemas!.Error as { properties: { code: { enum: string[] } } }).properties.code.enum;
    expect(logged).toEqual([...publicCodes, null]);
  });

  describe('served by the gateway', () => {
    let gw: TestGateway;
    const PUBLIC_URL = 'https://animals.example.test';
    /** The document as served: the file's, with the contact URL under this deployment's PUBLIC_URL. */
    const served = (file: typeof doc) => {
      const copy = JSON.parse(JSON.stringify(file)) as { info: { contact: { url: string } } };
      copy.info.contact.url = `${PUBLIC_URL}/portal/`;
      return copy;
    };
    beforeAll(async () => {
      gw = await startTestGateway({ env: { PUBLIC_URL } });
    });
    afterAll(() => gw?.stop());

    test('when /openapi.json and /openapi.yaml are fetched, then both are the document, its contact URL absolute under PUBLIC_URL', async () => {
      const json = await fetch(`${gw.url}/openapi.json`);
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await jsonOf(json)).toEqual(served(doc));
      const yaml = await fetch(`${gw.url}/openapi.yaml`);
      expect(yaml.status).toBe(200);
      expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
      expect(parse(await yaml.text())).toEqual(served(doc));
    });

    test('when /portal/openapi.json is fetched, then it is the portal document, its contact URL absolute under PUBLIC_URL', async () => {
      const json = await fetch(`${gw.url}/portal/openapi.json`);
      expect(json.status).toBe(200);
      expect(await jsonOf(json)).toEqual(served(loadOpenApiDocument(PORTAL_DOCUMENT_PATH)));
    });
  });
});
