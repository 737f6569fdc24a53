/**
 * An async iterator fed by push(), holding at most `capacity` undelivered items. A consumer
 * that falls that far behind is not waited for: `onOverflow` is called (the connection is
 * closed) and the iterator ends, so one slow subscriber never holds the others back.
 */
export class BoundedQueue<T> implements AsyncIterableIterator<T> {
  /**
   * Offered each item pushed while the consumer waits for one, before the consumer is woken:
   * true means the item was delivered by other means and the consumer goes on waiting, as
   * if it had taken the item and asked for the next. Only offered when nothing is queued,
   * so items still arrive in order (src/graphql/shared-event-execution.ts sets it).
   */
  offerWhileWaiting: ((item: T) => boolean) | undefined = undefined;
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private done = false;

  constructor(
    private readonly capacity: number,
    private readonly onOverflow: () => void,
    private readonly onEnd: () => void = () => {},
  ) {}

  push(item: T): void {
    if (this.done) return;
    if (this.waiting) {
      if (this.offerWhileWaiting?.(item)) return;
      const deliver = this.waiting;
      this.waiting = undefined;
      deliver({ value: item, done: false });
      return;
    }
    if (this.items.length >= this.capacity) {
      this.end();
      this.onOverflow();
      return;
    }
    this.items.push(item);
  }

  /** Ends after what is queued has been delivered (for subscriptions that complete). */
  finish(): void {
    if (this.items.length === 0) this.end();
    else this.finishing = true;
  }

  private finishing = false;

  next(): Promise<IteratorResult<T>> {
    if (this.items.length) {
      const value = this.items.shift()!;
      if (this.finishing && this.items.length === 0) this.end();
      return Promise.resolve({ value, done: false });
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private end(): void {
    if (this.done) return;
    this.done = true;
    this.items.length = 0;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
    this.onEnd();
  }
}
