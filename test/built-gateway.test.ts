import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './support/databases';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';
import { jsonOf } from './support/http';

/**
 * What the Docker image and the benchmarks run: `npm run build` compiles to dist/ and copies the
 * files the code reads beside itself; `node dist/gateway/main.js` then serves everything.
 */
describe('the compiled gateway (npm run build)', () => {
  const dataDir = tempDir('asg-built-');
  // What an earlier build left of a module since deleted from the source.
  const stale = join(__dirname, '..', 'dist', 'gateway', 'deleted-module.js');
  let gw: GatewayProcess | undefined;

  beforeAll(() => {
    mkdirSync(join(stale, '..'), { recursive: true });
    writeFileSync(stale, 'module.exports = "stale";\n');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: join(__dirname, '..'), stdio: 'pipe' });
  }, 120_000);
  afterAll(async () => {
    if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when started from dist/, then it serves the API, the OpenAPI document and the portal assets, and stops cleanly', async () => {
    gw = await spawnGateway({ DATA_DIR: dataDir }, 60_000, 'built');
    const api = await fetch(`${gw.url}/v1/pets`);
    expect(api.status).toBe(401);
    expect(await jsonOf(api)).toEqual({ code: 'unauthorized', message: 'Missing API key: send "Authorization: Bearer <API_KEY>".', status: 401 });
    const doc = await fetch(`${gw.url}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(((await jsonOf(doc)) as { openapi: string }).openapi).toMatch(/^3\./);
    const css = await fetch(`${gw.url}/portal/assets/portal.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${gw.url}/portal/`)).status).toBe(200);

    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 90_000);

  test('when an earlier build left a module since deleted from the source, then the build does not keep it', () => {
    expect(existsSync(stale)).toBe(false);
  });
});
