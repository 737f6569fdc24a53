import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from "graphql";

/**
 * graphql-ws's `next` messages, with each result's payload serialised once however many
 * subscriptions it goes to. An event shared by thousands of subscriptions is one result object
 * (src/graphql/shared-event-execution.ts), yet graphql-ws stringifies `{ id, type, payload }`
 * for each of them; here the payload's JSON is kept by its result and only the id differs.
 *
 * graphql-ws has no hook for a message's text, so this works through two it has: `onNext`
 * returns {@link NextMessages.payloadFor}'s placeholder as the payload, and graphql-ws
 * stringifies its message and hands the text to the socket's `send` at once (one synchronous
 * step); serialising the placeholder records the message it stands for, which `send` takes
 * with {@link NextMessages.take}. The text sent is byte for byte what graphql-ws would have
 * sent: JSON.stringify of `{ id, type: "next", payload }`, keys in that order.
 */
export class NextMessages {
  /** Each result's payload JSON, gone with the result. */
  private readonly payloads = new WeakMap<ExecutionResult, string>();
  /** The message whose placeholder was serialised last and not yet sent. */
  private serialised: string | undefined;

  constructor(private readonly formatError: (error: GraphQLError) => GraphQLFormattedError) {}

  /** The payload to hand graphql-ws for `result` going to subscription `id`. */
  payloadFor(id: string, result: ExecutionResult): object {
    return new Placeholder(this, this.messageFor(id, result));
  }

  /** The text of graphql-ws's next message carrying `result` to subscription `id`. */
  messageFor(id: string, result: ExecutionResult): string {
    let payload = this.payloads.get(result);
    if (payload === undefined) this.payloads.set(result, (payload = JSON.stringify(formattedPayload(result, this.formatError))));
    return `{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`;
  }

  /** Called as graphql-ws serialises a placeholder, just before it sends the text. */
  serialising(message: string): void {
    this.serialised = message;
  }

  /** The message to send instead of `text`, when `text` is graphql-ws's serialisation of a placeholder. */
  take(text: string): string {
    const message = this.serialised;
    if (message === undefined) return text;
    this.serialised = undefined;
    // Only a next message without a payload can be a placeholder's: graphql-ws never sends one.
    return text.startsWith('{"id":') && text.endsWith(',"type":"next"}') ? message : text;
  }
}

/** Stands for a next message's payload; serialised, it records the message and leaves no trace in graphql-ws's text. */
class Placeholder {
  constructor(
    private readonly messages: NextMessages,
    private readonly message: string,
  ) {}

  toJSON(): undefined {
    this.messages.serialising(this.message);
    return undefined;
  }
}

/** What graphql-ws sends as a result's payload, with errors through our formatter. */
function formattedPayload(result: ExecutionResult, formatError: (error: GraphQLError) => GraphQLFormattedError): object {
  const { errors, ...withoutErrors } = result;
  return errors ? { ...result, errors: errors.map(formatError) } : withoutErrors;
}
