import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the ready line. */
  readyMs: number;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Runs `npm start`'s entry point (or, with `entry: 'built'`, the compiled `dist/gateway/main.js`
 * of `npm run build`) as a real child process and waits for its ready line.
 */
export function spawnGateway(env: Record<string, string>, timeoutMs = 30_000, entry: 'source' | 'built' = 'source'): Promise<GatewayProcess> {
  const started = Date.now();
  const args = entry === 'built' ? [join(ROOT, 'dist', 'gateway', 'main.js')] : ['--import', 'tsx', join(ROOT, 'gateway', 'main.ts')];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway not ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /ready at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, readyMs: Date.now() - started, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`gateway exited with ${code} before it was ready:\n${out}`), { code, output: out }));
    });
  });
}
