import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "../log/logger.js";

interface RequestErrors {
  count: number;
  first?: unknown;
}

const MESSAGE = "unexpected error in a GraphQL operation";

/**
 * Logs the unexpected errors of GraphQL operations (formatError's `report`): one line per HTTP
 * request, with the first error and how many there were, so an answer of thousands of failed
 * entities or list items is one line, not thousands with a stack each. Outside a request (a
 * WebSocket operation) each error is its own line.
 */
export class UnexpectedErrors {
  private readonly current = new AsyncLocalStorage<RequestErrors>();

  constructor(private readonly logger: Logger) {}

  /** formatError's report: counted for the request it belongs to. */
  readonly report = (error: unknown): void => {
    const request = this.current.getStore();
    if (!request) return this.logger.error({ err: error }, MESSAGE);
    if (request.count++ === 0) request.first = error;
  };

  /** Runs one HTTP request's handler, then logs its unexpected errors as one line. */
  async perRequest(handle: () => Promise<void>): Promise<void> {
    const request: RequestErrors = { count: 0 };
    try {
      await this.current.run(request, handle);
    } finally {
      if (request.count > 0) this.logger.error({ err: request.first, errors: request.count }, MESSAGE);
    }
  }
}
