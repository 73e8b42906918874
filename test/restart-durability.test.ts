import { rmSync } from 'node:fs';
import { tempDir } from './support/databases';
import { signUpDeveloper } from './support/gateway-harness';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';
import { jsonOf } from './support/http';

/** The real `npm start` process on a real DATA_DIR: restarts, kill -9 and a second process on the same files. */
describe('embedded data across process restarts', () => {
  const dataDir = tempDir('asg-restart-');
  const running: GatewayProcess[] = [];
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when the process is killed with SIGKILL right after a 201, then the pets and keys are there after a restart; a second process on the same DATA_DIR is refused; SIGTERM exits 0', async () => {
    const first = await spawnGateway({ DATA_DIR: dataDir });
    running.push(first);
    const dev = await signUpDeveloper(first.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    const created: number[] = [];
    for (const name of ['Alpha', 'Beta', 'Gamma']) {
      const res = await fetch(`${first.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name, categoryId: 1 }) });
      expect(res.status).toBe(201);
      created.push((await jsonOf(res)).id);
    }
    first.child.kill('SIGKILL'); // immediately after the last acknowledgement
    await first.exited;

    const second = await spawnGateway({ DATA_DIR: dataDir }); // the stale lock of the killed process is taken over
    running.push(second);
    const list = await fetch(`${second.url}/v1/pets?limit=100`, { headers: auth });
    expect(list.status).toBe(200); // the key (and the generated secrets) survived too
    expect((await jsonOf(list)).map((p: { id: number }) => p.id)).toEqual(created);

    const intruder = spawnGateway({ DATA_DIR: dataDir });
    await expect(intruder).rejects.toMatchObject({ code: 1 });
    await expect(intruder).rejects.toThrow(/in use by process \d+\. PGlite serves one process/);
    expect((await fetch(`${second.url}/v1/pets?limit=1`, { headers: auth })).status).toBe(200); // the owner is unharmed

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 90_000);
});
