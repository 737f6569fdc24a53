import type { Logger } from "../log/logger.js";
import { backoffDelay } from "../lifecycle/backoff.js";

/** The backoff before retrying the `failures`th failed write in a row: 200 ms doubling to 5 s. */
function writeRetryDelayMs(failures: number): number {
  return backoffDelay({ initialMs: 200, maxMs: 5_000 }, failures);
}

/** What a {@link WriteLoop} does for its recorder. */
export interface WriteLoopOptions {
  /** `databaseUp` is the loop's: false from a failed write until one succeeds. */
  status: { databaseUp: boolean };
  logger: Logger;
  /** How many writes wait: none is nothing to do. */
  pending: () => number;
  /** Writes the next batch and takes it off the queue; a throw keeps it there, to be retried after the backoff. */
  write: () => Promise<void>;
  /** After a write, on whose success the database is up again. */
  written: () => void;
  /** After a failed write, before the backoff. */
  failed: (error: unknown) => void;
  /** What the log says when writes work again, and when they start failing. */
  messages: { up: string; down: string };
}

/**
 * A recorder's write loop: waits for work, writes it, and after a failure waits out a backoff
 * (200 ms doubling to 5 s) before retrying. The first failure of a run and the first success
 * after one are logged, once each. {@link wake} (new work, stopping) ends either wait at once.
 */
export class WriteLoop {
  private waiting: (() => void) | undefined;
  private halted = false;
  private ended: Promise<void> = Promise.resolve();

  constructor(private readonly options: WriteLoopOptions) {}

  /** True once {@link stop} was called. */
  get stopped(): boolean {
    return this.halted;
  }

  start(): void {
    this.ended = this.run();
  }

  /** Ends the current wait, if any. */
  wake(): void {
    this.waiting?.();
  }

  /** Ends the loop after the write in progress, if any; resolves when it has ended. */
  stop(): Promise<void> {
    this.halted = true;
    this.wake();
    return this.ended;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.halted) {
      if (this.options.pending() === 0) {
        await new Promise<void>((resolve) => (this.waiting = resolve));
        continue;
      }
      try {
        await this.options.write();
        if (!this.options.status.databaseUp) this.options.logger.info(this.options.messages.up);
        this.options.status.databaseUp = true;
        failures = 0;
        this.options.written();
      } catch (error) {
        failures++;
        if (this.options.status.databaseUp) this.options.logger.warn({ err: (error as Error).message, pending: this.options.pending() }, this.options.messages.down);
        this.options.status.databaseUp = false;
        this.options.failed(error);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, writeRetryDelayMs(failures));
          this.waiting = () => (clearTimeout(timer), resolve());
        });
      }
    }
  }
}
