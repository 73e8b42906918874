import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface PetStoreProcess {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the ready line. */
  readyMs: number;
  exited: Promise<number | null>;
  output(): string;
}

/** `npm run start:petstore` as a real child process on a given port and DATA_DIR; resolves on its ready line. */
export function spawnPetStore(options: { port: number; dataDir: string }, timeoutMs = 30_000): Promise<PetStoreProcess> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'petstore', 'main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PETSTORE_HOST: '127.0.0.1', PETSTORE_PORT: String(options.port), DATA_DIR: options.dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pet store not ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"msg":"pet store listening","url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, readyMs: Date.now() - started, exited, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`pet store exited with ${code} before it was ready:\n${out}`));
    });
  });
}
