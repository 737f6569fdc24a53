/**
 * Something done again and again until stopped: the metrics poller, the usage sampler, the
 * lease elector and history retention. One run at a time; the next is timed from the end of
 * the last, so a slow run never piles up behind itself; stop() clears the timer, waits for a
 * run in progress and guarantees none starts after it. Timers are unref'd: a task never keeps
 * the process alive on its own.
 */
export interface PeriodicTaskOptions {
  /**
   * One run; `plannedAt` is when it was scheduled for (the sampler stamps its rows with it).
   * It should handle its own failures; a rejection goes to `onError` and the task goes on.
   */
  run(plannedAt: Date): Promise<void>;
  /** The wait before the next run, asked after each run (and before the first unless `immediately`). */
  delayMs(): number;
  /** Run once at start rather than after the first delay. */
  immediately?: boolean;
  onError?(error: unknown): void;
}

export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private active = false;

  constructor(private readonly options: PeriodicTaskOptions) {}

  /** True between start() and stop(). */
  get started(): boolean {
    return this.active;
  }

  /** Starts the runs; a second start while started does nothing. */
  start(): void {
    if (this.active) return;
    this.active = true;
    this.schedule(this.options.immediately ? 0 : this.options.delayMs());
  }

  /** No run starts after this; resolves once a run in progress has ended. Idempotent. */
  async stop(): Promise<void> {
    this.active = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  private schedule(ms: number): void {
    const plannedAt = new Date(Date.now() + ms);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.current = this.options
        .run(plannedAt)
        .catch((error) => this.options.onError?.(error))
        .finally(() => {
          this.current = undefined;
          if (this.active) this.schedule(this.options.delayMs());
        });
    }, ms);
    this.timer.unref();
  }
}
