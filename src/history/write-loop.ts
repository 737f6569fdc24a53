import type { Logger } from "../log/logger.js";

/**
 * How a recorder's write loop waits: for work when its queue is empty, or out a retry's backoff
 * after a failed write; `wake()` (new work, stopping) ends either wait at once.
 */
export class Wakeup {
  private waiting: (() => void) | undefined;

  /** Ends the current wait, if any. */
  wake(): void {
    this.waiting?.();
  }

  /** Resolves on the next {@link wake}. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => (this.waiting = resolve));
  }

  /** Resolves after `ms`, or on a {@link wake} before then. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiting = () => (clearTimeout(timer), resolve());
    });
  }
}

/** The backoff before retrying the `failures`th failed write in a row: 200 ms doubling to 5 s. */
function writeRetryDelayMs(failures: number): number {
  return Math.min(5_000, 100 * 2 ** Math.min(failures, 6));
}

/** What {@link runWriteLoop} needs of a recorder. */
export interface WriteLoop {
  wakeup: Wakeup;
  /** `databaseUp` is the loop's: false from a failed write until one succeeds. */
  status: { databaseUp: boolean };
  logger: Logger;
  stopped: () => boolean;
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
 * A recorder's write loop, until `stopped()`: waits for work, writes it, and after a failure
 * waits out a backoff (200 ms doubling to 5 s) before retrying. The first failure of a run and
 * the first success after one are logged, once each.
 */
export async function runWriteLoop(loop: WriteLoop): Promise<void> {
  let failures = 0;
  while (!loop.stopped()) {
    if (loop.pending() === 0) {
      await loop.wakeup.next();
      continue;
    }
    try {
      await loop.write();
      if (!loop.status.databaseUp) loop.logger.info(loop.messages.up);
      loop.status.databaseUp = true;
      failures = 0;
      loop.written();
    } catch (error) {
      failures++;
      if (loop.status.databaseUp) loop.logger.warn({ err: (error as Error).message, pending: loop.pending() }, loop.messages.down);
      loop.status.databaseUp = false;
      loop.failed(error);
      await loop.wakeup.sleep(writeRetryDelayMs(failures));
    }
  }
}
