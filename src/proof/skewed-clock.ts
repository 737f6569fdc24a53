/**
 * Preloaded (`node --import`) into a replica the soak starts with a skewed clock: Date reads
 * the wall clock plus PROOF_CLOCK_SKEW_MS, as on a machine whose clock is off. Monotonic time
 * (performance.now, timers) is left alone, as skew leaves it. Test-only: nothing in the service reads it.
 */
const skew = Number(process.env.PROOF_CLOCK_SKEW_MS ?? 0);
if (Number.isFinite(skew) && skew !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(realNow() + skew);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return realNow() + skew;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
}
export {};
