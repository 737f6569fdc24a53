import { AppError, ErrorCode } from "./errors.js";

/** Why an operation was refused for the operations already running, in `extensions.reason`. */
export const InFlightReason = {
  /** The caller has as many operations running as it may (HTTP 429). */
  CALLER_BUSY: "TOO_MANY_IN_FLIGHT",
  /** The service has as many operations running as it takes (HTTP 503). */
  SERVER_BUSY: "SERVER_BUSY",
} as const;

/** Seconds a refused caller is told to wait: operations here take milliseconds to seconds. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/**
 * Bounds the operations running at once, per caller and overall, over HTTP and WebSocket
 * alike: one caller's flood of parallel requests is refused at once (cheaply, before its
 * documents are parsed) instead of queueing every other caller behind it.
 */
export class InFlightLimiter {
  private readonly running = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perCaller: number,
    private readonly overall: number,
  ) {}

  /** A release function for a slot taken for `subject`, or the AppError refusing it (with retryAfterSeconds). */
  acquire(subject: string): (() => void) | AppError {
    const mine = this.running.get(subject) ?? 0;
    if (mine >= this.perCaller) {
      return new AppError(ErrorCode.RATE_LIMITED, `Too many operations at once: at most ${this.perCaller} per caller; try again in ${IN_FLIGHT_RETRY_AFTER_SECONDS} s`, {
        reason: InFlightReason.CALLER_BUSY,
        retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS,
      });
    }
    if (this.total >= this.overall) {
      return new AppError(ErrorCode.UNAVAILABLE, `The service is running as many operations as it takes (${this.overall}); try again in ${IN_FLIGHT_RETRY_AFTER_SECONDS} s`, {
        reason: InFlightReason.SERVER_BUSY,
        retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS,
      });
    }
    this.running.set(subject, mine + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.running.get(subject) ?? 1) - 1;
      if (left === 0) this.running.delete(subject);
      else this.running.set(subject, left);
    };
  }
}
