import type { LocalServices } from './local-services';

/** Stops whatever the global setup had to start. */
export default async function globalTeardown(): Promise<void> {
  await (globalThis as { localServices?: LocalServices }).localServices?.stop();
}
