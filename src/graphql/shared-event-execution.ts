import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from "graphql";

type Result = ExecutionResult | Promise<ExecutionResult>;

/**
 * A subscription's results, which its transport may take as soon as they are ready rather
 * than through the iterator: graphql-ws's loop over the iterator (a promise, an iteration, an
 * async `onNext` and an awaited `send` per result) is most of what each delivery costs the
 * service besides the socket write, and it is paid per subscriber of a shared result.
 */
export interface ResultsStream extends AsyncGenerator<ExecutionResult> {
  /**
   * Set by the transport: delivers `result` now, exactly as the iterator's consumer would
   * have, and returns true; or returns false (cannot now), and the result goes through the
   * iterator. Offered only shared results ready at once, while the consumer is idle (waiting
   * for the next, nothing queued), so results still arrive in order.
   */
  deliverNow?: (result: ExecutionResult) => boolean;
}

/** A source stream that offers each event to a hook while its consumer waits (as BoundedQueue does). */
interface OffersWhileWaiting {
  offerWhileWaiting: ((event: unknown) => boolean) | undefined;
}

/**
 * graphql's `subscribe`, except that an event reaching many subscriptions is executed once for
 * all of those with the same sharing key (`keyOf`: document, variables and caller), and they
 * get the same result. The source stream stays each subscription's own (its arguments checked
 * at subscribe time, its bounded queue, its errors); only the execution of an event against
 * the selection is shared. Events are told apart by identity, so only object events (one
 * object handed to every listener, as the hub does) are shared; a subscription without a key
 * executes every event itself, as graphql does. Each execution gets its own context from
 * `contextForEvent` (fresh DataLoaders): a loader kept for the subscription's life would answer
 * every later event from what the first one loaded.
 */
export function sharedEventSubscribe(
  keyOf: (args: ExecutionArgs) => string | undefined,
  /** The context one event is executed with: per event, so that no DataLoader outlives it. */
  contextForEvent: (contextValue: unknown) => unknown = (contextValue) => contextValue,
): (args: ExecutionArgs) => Promise<ResultsStream | ExecutionResult> {
  /** Each event's results by sharing key; gone with the event once no queue holds it. */
  const results = new WeakMap<object, Map<string, Result>>();
  return async (args) => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    const key = keyOf(args);
    const run = (event: unknown): Result => execute({ ...args, contextValue: contextForEvent(args.contextValue), rootValue: event });
    const shared = (event: object): Result => {
      let byKey = results.get(event);
      if (!byKey) results.set(event, (byKey = new Map()));
      let result = byKey.get(key!);
      if (result === undefined) byKey.set(key!, (result = run(event)));
      return result;
    };
    const { stream, iterator } = mapEvents(source, (event) => (key === undefined || typeof event !== "object" || event === null ? run(event) : shared(event)));
    if (key !== undefined && "offerWhileWaiting" in iterator) {
      // Shared results only: an event offered and refused is mapped again by the iterator, which finds its result kept.
      (iterator as OffersWhileWaiting).offerWhileWaiting = (event) => {
        if (!stream.deliverNow || typeof event !== "object" || event === null) return false;
        let result: Result;
        try {
          result = shared(event);
        } catch {
          return false; // the iterator maps it again and ends the stream with the error, as graphql does
        }
        return !(result instanceof Promise) && stream.deliverNow(result);
      };
    }
    return stream;
  };
}

/**
 * The source's events mapped by `map`, ended with the source (as graphql's own mapAsyncIterator),
 * and the source's iterator.
 * Written with `then` rather than async functions: it runs once per event per subscriber, and
 * each async function and `await` of a value that is already there costs promises and turns of
 * the microtask queue that thousands of subscribers pay for at once.
 */
function mapEvents(source: AsyncIterable<unknown>, map: (event: unknown) => Result): { stream: ResultsStream; iterator: AsyncIterator<unknown> } {
  const iterator = source[Symbol.asyncIterator]();
  const closeIgnoringErrors = async () => {
    try {
      await iterator.return?.();
    } catch {
      // Keep the error that made us close.
    }
  };
  const failed = (error: unknown): Promise<never> =>
    closeIgnoringErrors().then(() => {
      throw error;
    });
  const mapped = (step: IteratorResult<unknown>): IteratorResult<ExecutionResult> | Promise<IteratorResult<ExecutionResult>> => {
    if (step.done) return { value: undefined, done: true };
    let result: Result;
    try {
      result = map(step.value);
    } catch (error) {
      return failed(error);
    }
    if (!(result instanceof Promise)) return { value: result, done: false };
    return result.then((value) => ({ value, done: false }), failed);
  };
  /** `step()`'s promise, or its synchronous throw as a rejection (as an async function would make it). */
  const settle = <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return step();
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const generator: ResultsStream = {
    next: () => settle(() => iterator.next()).then(mapped),
    return: () => (iterator.return ? settle(() => iterator.return!()).then(mapped) : Promise.resolve({ value: undefined, done: true })),
    throw: (error: unknown) => (iterator.throw ? settle(() => iterator.throw!(error)).then(mapped) : failed(error)),
    [Symbol.asyncIterator]: () => generator,
  };
  return { stream: generator, iterator };
}
