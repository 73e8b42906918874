import { join } from 'node:path';
import { ROOT, spawnUntilReady, type ReadyProcess } from './child-process';

export type PetStoreProcess = ReadyProcess;

/** `npm run start:petstore` as a real child process on a given port and DATA_DIR (and PETSTORE_GATEWAY_TOKEN); resolves on its ready line. */
export function spawnPetStore(options: { port: number; dataDir: string; gatewayToken?: string }, timeoutMs = 30_000): Promise<PetStoreProcess> {
  return spawnUntilReady({
    name: 'pet store',
    args: ['--import', 'tsx', join(ROOT, 'petstore', 'main.ts')],
    env: {
      PETSTORE_HOST: '127.0.0.1',
      PETSTORE_PORT: String(options.port),
      DATA_DIR: options.dataDir,
      ...(options.gatewayToken === undefined ? {} : { PETSTORE_GATEWAY_TOKEN: options.gatewayToken }),
    },
    ready: /"msg":"pet store listening","url":"(http:\/\/[^"]+)"/,
    timeoutMs,
  });
}
