import type { Logger } from '../../lib/logger';
import type { Config } from '../config';
import type { Cleanup } from './defer';

/** What every wiring function is given: the validated config, the logger, the clock, and where to register its cleanup. */
export interface Wiring {
  config: Config;
  logger: Logger;
  /** The gateway's clock (sunset, key expiry, sessions). */
  now: () => Date;
  /** Registers a cleanup for what was just built; the gateway's stop runs them last first. */
  defer: (cleanup: Cleanup) => void;
}
