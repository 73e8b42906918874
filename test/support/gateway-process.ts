import { join } from 'node:path';
import { GATEWAY_NODE_FLAGS } from '../../bench/support/processes';
import { ROOT, spawnUntilReady, type ReadyProcess } from './child-process';

export type GatewayProcess = ReadyProcess;

/**
 * Runs `npm start`'s entry point (or, with `entry: 'built'`, the compiled `dist/gateway/main.js`
 * of `npm run build`) as a real child process, with the Node flags both scripts give it, and
 * waits for its ready line. The suite thereby also shows that the Node running it accepts them.
 */
export function spawnGateway(env: Record<string, string>, timeoutMs = 30_000, entry: 'source' | 'built' = 'source'): Promise<GatewayProcess> {
  return spawnUntilReady({
    name: 'gateway',
    args: [...GATEWAY_NODE_FLAGS, ...(entry === 'built' ? [join(ROOT, 'dist', 'gateway', 'main.js')] : ['--import', 'tsx', join(ROOT, 'gateway', 'main.ts')])],
    env: { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
    ready: /ready at (http:\/\/\S+)/,
    timeoutMs,
  });
}
