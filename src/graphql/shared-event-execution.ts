import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from "graphql";

type Result = ExecutionResult | Promise<ExecutionResult>;

/**
 * graphql's `subscribe`, except that an event reaching many subscriptions is executed once for
 * all of those with the same sharing key (`keyOf`: document, variables and caller), and they
 * get the same result. The source stream stays each subscription's own (its arguments checked
 * at subscribe time, its bounded queue, its errors); only the execution of an event against
 * the selection is shared. Events are told apart by identity, so only object events (one
 * object handed to every listener, as the hub does) are shared; a subscription without a key
 * executes every event itself, as graphql does.
 */
export function sharedEventSubscribe(keyOf: (args: ExecutionArgs) => string | undefined): (args: ExecutionArgs) => Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  /** Each event's results by sharing key; gone with the event once no queue holds it. */
  const results = new WeakMap<object, Map<string, Result>>();
  return async (args) => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    const key = keyOf(args);
    const run = (event: unknown): Result => execute({ ...args, rootValue: event });
    return mapEvents(source, (event) => {
      if (key === undefined || typeof event !== "object" || event === null) return run(event);
      let byKey = results.get(event);
      if (!byKey) results.set(event, (byKey = new Map()));
      let result = byKey.get(key);
      if (result === undefined) byKey.set(key, (result = run(event)));
      return result;
    });
  };
}

/**
 * The source's events mapped by `map`, ended with the source (as graphql's own mapAsyncIterator).
 * Written with `then` rather than async functions: it runs once per event per subscriber, and
 * each async function and `await` of a value that is already there costs promises and turns of
 * the microtask queue that thousands of subscribers pay for at once.
 */
function mapEvents(source: AsyncIterable<unknown>, map: (event: unknown) => Result): AsyncGenerator<ExecutionResult> {
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
  const generator: AsyncGenerator<ExecutionResult> = {
    next: () => settle(() => iterator.next()).then(mapped),
    return: () => (iterator.return ? settle(() => iterator.return!()).then(mapped) : Promise.resolve({ value: undefined, done: true })),
    throw: (error: unknown) => (iterator.throw ? settle(() => iterator.throw!(error)).then(mapped) : failed(error)),
    [Symbol.asyncIterator]: () => generator,
  };
  return generator;
}
