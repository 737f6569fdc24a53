/**
 * The simulated clock. Simulated time runs `speed` times faster than wall time
 * while ticking, and tests move it on by hand with `advance(ms)` so nothing has
 * to sleep. Speed 0 freezes it between advances.
 */
export class SimClock {
  private simMs: number;
  private wallAnchor: number;
  private simAnchor: number;

  constructor(
    start: number,
    public speed: number,
  ) {
    this.simMs = start;
    this.wallAnchor = Date.now();
    this.simAnchor = start;
  }

  /** Simulated milliseconds since the epoch. */
  now(): number {
    const flowing = this.simAnchor + (Date.now() - this.wallAnchor) * this.speed;
    // Never go backwards, even if a manual advance overtook the flow.
    if (flowing > this.simMs) this.simMs = flowing;
    return this.simMs;
  }

  /** RFC 3339 timestamp at second precision, as the apiserver writes them. */
  iso(ms = this.now()): string {
    return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
  }

  /** RFC 3339 with microseconds, as leases' MicroTime fields are written. */
  microIso(ms = this.now()): string {
    return new Date(ms).toISOString().replace("Z", "000Z");
  }

  /** Jump simulated time forward. */
  advance(ms: number): void {
    const target = this.now() + ms;
    this.simMs = target;
    this.simAnchor = target;
    this.wallAnchor = Date.now();
  }
}
