import { rmSync } from 'node:fs';
import { tempDir } from './support/databases';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';

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
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
  }, 60_000);
});
