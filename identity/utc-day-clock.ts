import { DAY_MS, dayNumber } from './daily-usage';

export interface UtcDayClock {
  /** Today's UTC day number (daily-usage.ts `dayNumber`), without reading the clock. */
  today(): number;
  close(): void;
}

/**
 * Today's UTC day, kept current by a timer set for each midnight: counting a response then costs
 * no clock read (tens of nanoseconds on a virtual machine), only a variable's value.
 */
export function createUtcDayClock(nowMs: () => number = Date.now): UtcDayClock {
  let day = dayNumber(nowMs());
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    // A timer that fires a little early finds the same day and waits for the rest.
    timer = setTimeout(turn, Math.max((day + 1) * DAY_MS - nowMs(), 1));
    timer.unref();
  };
  function turn(): void {
    day = dayNumber(nowMs());
    arm();
  }
  arm();
  return {
    today: () => day,
    close: () => clearTimeout(timer),
  };
}
