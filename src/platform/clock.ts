// An injectable clock: production reads the system time; tests move a manual one, so none sleeps.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  private ms: number;
  constructor(ms = Date.now()) {
    this.ms = ms;
  }
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
