import { rmSync } from 'node:fs';
import { tempDir } from './support/databases';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';
import { until } from './support/until';

/** The line an operator reads first: it names the address actually bound, then a URL that answers from this machine. */
describe('the ready line', () => {
  const dataDir = tempDir('asg-ready-line-');
  let gw: GatewayProcess | undefined;
  afterAll(() => {
    if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when HOST=0.0.0.0, then it says all interfaces, not 127.0.0.1, and the URL after "ready at" answers', async () => {
    gw = await spawnGateway({ DATA_DIR: dataDir, HOST: '0.0.0.0' });
    const port = new URL(gw.url).port;
    expect(gw.output()).toContain(`Animal Store Gateway listening on 0.0.0.0:${port} (all interfaces), ready at http://127.0.0.1:${port}  (OpenAPI: http://127.0.0.1:${port}/openapi.json)\n`);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    // Without ADMIN_TOKEN, the next line says how to turn the admin API on.
    await until('the admin line', () => gw!.output().includes('Admin API off'));
    expect(gw.output()).toContain('\nAdmin API off: set ADMIN_TOKEN (at least 32 characters) to serve it on ADMIN_HOST:ADMIN_PORT (default 127.0.0.1:8081)\n');
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 60_000);

  test('when ADMIN_TOKEN is set, then the next line gives the admin listener\'s URL, which serves its contract', async () => {
    gw = await spawnGateway({ DATA_DIR: dataDir, ADMIN_TOKEN: 'ready-line-admin-token-0123456789abcdef', ADMIN_PORT: '0' });
    await until('the admin line', () => /Admin API at /.test(gw!.output()));
    const [, adminUrl] = /\nAdmin API at (http:\/\/127\.0\.0\.1:\d+)\/admin\/v1\/ {2}\(OpenAPI: \1\/openapi\.json\)\n/.exec(gw.output()) ?? [];
    expect(adminUrl).toBeDefined();
    expect(adminUrl).not.toBe(gw.url);
    expect((await fetch(`${adminUrl}/openapi.json`)).status).toBe(200);
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 60_000);
});
