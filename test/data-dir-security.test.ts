import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY_NODE_FLAGS } from '../bench/support/processes';
import { ROOT } from './support/child-process';
import { tempDir } from './support/databases';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';

/** Every entry under `dir` (itself included) with its permission bits. */
function modesUnder(dir: string): Array<{ path: string; mode: number }> {
  const out = [{ path: dir, mode: statSync(dir).mode & 0o777 }];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    out.push({ path, mode: statSync(path).mode & 0o777 });
  }
  return out;
}

/** DATA_DIR holds key hashes, password hashes, sessions and development secrets: nobody but the gateway's user may read it. */
describe('DATA_DIR at rest', () => {
  const dirs: string[] = [];
  let gateway: GatewayProcess | undefined;
  afterEach(async () => {
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    gateway = undefined;
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('when the gateway creates DATA_DIR, then the folder is 0700 and nothing in it is open to group or others', async () => {
    const parent = tempDir('asg-datadir-');
    dirs.push(parent);
    const dataDir = join(parent, 'data');
    gateway = await spawnGateway({ DATA_DIR: dataDir });

    const modes = modesUnder(dataDir);
    expect(modes.length).toBeGreaterThan(10); // PGlite's own files, the secrets and the lock
    expect(modes[0]!.mode).toBe(0o700);
    expect(modes.filter((m) => (m.mode & 0o077) !== 0)).toEqual([]);
  });

  test('when an existing DATA_DIR is readable by others, then it is tightened to 0700 and the log says so', async () => {
    const dataDir = tempDir('asg-datadir-');
    dirs.push(dataDir);
    chmodSync(dataDir, 0o755);
    gateway = await spawnGateway({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });

    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const line = gateway.output().split('\n').find((l) => l.includes('DATA_DIR was open to other users'));
    expect(line && JSON.parse(line)).toMatchObject({ level: 40, dataDir, was: '755', now: '700' });
  });

  test('when DATA_DIR is on a full disk, then the start fails naming that cause, not "undefined"', async () => {
    const mountPoint = tempDir('asg-fulldisk-');
    dirs.push(mountPoint);
    mkdirSync(join(mountPoint, 'x'), { recursive: true });
    // A private mount namespace: a 2 MiB tmpfs only this child sees, far smaller than the embedded database.
    const child = spawn(
      'unshare',
      ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=2m tmpfs "$1" && shift && exec "$@"', 'sh', mountPoint, process.execPath, ...GATEWAY_NODE_FLAGS, '--import', 'tsx', join(ROOT, 'gateway', 'main.ts')],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', DATA_DIR: join(mountPoint, 'data') }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    expect(output).toContain(`Failed to start: The embedded database in ${join(mountPoint, 'data')} could not be opened: no space left on device (ENOSPC)\n`);
    expect(output).not.toContain('undefined');
    expect(code).toBe(1);
  });
});
