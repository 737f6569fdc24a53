import type { FormattedExecutionResult } from "graphql";

/**
 * A value of an answer already written as JSON (UTF-8 bytes), in pieces that are reused from
 * one answer to the next while what they were written from is unchanged (answer-fragments.ts).
 * The pieces are filled in before the answer that first holds them is complete and never
 * changed after: a fragment that has to change is a new PrerenderedJson, so an answer holding
 * one is a consistent snapshot however long it waits for the socket.
 */
export class PrerenderedJson {
  constructor(readonly parts: Buffer[]) {}

  /** For anything that serialises it with JSON.stringify instead of {@link serialiseResult}. */
  toJSON(): unknown {
    return JSON.parse(Buffer.concat(this.parts).toString("utf8"));
  }
}

/**
 * The field the executor puts in place of a cached object's selection: `{ [PRERENDERED_FIELD]:
 * PrerenderedJson }` stands for the object whose JSON it holds. The API schema has no such
 * field, so no caller can ask for one; an alias of that name holds a string or a number, never
 * a PrerenderedJson.
 */
export const PRERENDERED_FIELD = "nodeInventoryPrerendered";

/**
 * How an answer's data says it is to be written as bytes, and for which request: carried by the
 * data object itself under a symbol (JSON.stringify, Object.keys and Apollo's formatting skip
 * symbol keys), so nothing outlives the answer and no table is shared between requests.
 * Prerendered: it holds PrerenderedJson values. Otherwise it is one of the executor's large
 * answers (live inventory, capacity report) written from its JSON text.
 */
const ANSWER_TO_WRITE = Symbol("node-inventory answer to write");

interface AnswerToWrite {
  request: object;
  prerendered: boolean;
}

function mark(data: object, answer: AnswerToWrite): void {
  Object.defineProperty(data, ANSWER_TO_WRITE, { value: answer, enumerable: false, configurable: true });
}

/** Marks `data` as holding PrerenderedJson values, for the request whose context value is `request`. */
export function markPrerendered(data: object, request: object): void {
  mark(data, { request, prerendered: true });
}

/** Marks `data` as a large answer (live inventory, capacity report) to write as bytes (see {@link PrerenderedAnswers}), for the request whose context value is `request`. */
export function markLargeAnswer(data: object, request: object): void {
  mark(data, { request, prerendered: false });
}

/** A result as Apollo's default writes it (`JSON.stringify(result) + "\n"`), as UTF-8, with the prerendered pieces copied in. */
export function serialiseResult(result: FormattedExecutionResult): Buffer {
  const writer = new PieceWriter();
  writeValue(result, writer);
  writer.text("\n");
  return writer.bytes();
}

class PieceWriter {
  private readonly pieces: (string | Buffer)[] = [];
  private pending = "";

  text(text: string): void {
    this.pending += text;
  }

  raw(parts: readonly Buffer[]): void {
    if (this.pending !== "") this.pieces.push(this.pending);
    this.pending = "";
    for (const part of parts) this.pieces.push(part);
  }

  bytes(): Buffer {
    if (this.pending !== "") this.pieces.push(this.pending);
    let length = 0;
    for (const piece of this.pieces) length += typeof piece === "string" ? Buffer.byteLength(piece) : piece.length;
    const out = Buffer.allocUnsafe(length);
    let at = 0;
    for (const piece of this.pieces) at += typeof piece === "string" ? out.write(piece, at) : piece.copy(out, at);
    return out;
  }
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

/** JSON.stringify's output, for the plain objects, arrays and primitives a GraphQL result is made of. */
function writeValue(value: unknown, writer: PieceWriter): void {
  if (value === null || typeof value !== "object") {
    writer.text(JSON.stringify(value));
    return;
  }
  if (value instanceof PrerenderedJson) return writer.raw(value.parts);
  if (Array.isArray(value)) {
    writer.text("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) writer.text(",");
      const item = value[i];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") writer.text("null");
      else writeValue(item, writer);
    }
    writer.text("]");
    return;
  }
  if (!isPlainObject(value)) {
    writer.text(JSON.stringify(value));
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const stand = record[PRERENDERED_FIELD];
  if (keys.length === 1 && stand instanceof PrerenderedJson) return writer.raw(stand.parts);
  writer.text("{");
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    writer.text(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
    first = false;
    writeValue(item, writer);
  }
  writer.text("}");
}

/**
 * Apollo Server's `stringifyResult` must return a string, and an answer of every node of a large
 * fleet is megabytes of it: made, measured for Content-Length and converted to UTF-8 again for the socket.
 * For a result holding prerendered pieces this writes the bytes once and hands Apollo a token
 * instead, which the HTTP handler exchanges for them (`take`). A live inventory or capacity
 * report answer without them (a document graphql-jit could not compile) is written the same way from its JSON
 * text: the text with "\n" appended was a second string, flattened into a third copy (two bytes
 * a character once a node's text is not Latin-1) for the socket to encode into a fourth.
 * Every other result is Apollo's default, `JSON.stringify(result) + "\n"`.
 *
 * The bytes wait keyed by the request's context value, not in a table shared by every request:
 * however many requests are between Apollo's stringify and the handler at once, each finds its
 * own, and bytes a request never takes (it failed in between) go with the request.
 */
export class PrerenderedAnswers {
  private readonly waiting = new WeakMap<object, Buffer>();

  readonly stringifyResult = (result: FormattedExecutionResult): string => {
    const answer = result.data ? ((result.data as Record<symbol, unknown>)[ANSWER_TO_WRITE] as AnswerToWrite | undefined) : undefined;
    if (!answer) return JSON.stringify(result) + "\n";
    this.waiting.set(answer.request, answer.prerendered ? serialiseResult(result) : jsonBytes(result));
    return TOKEN;
  };

  /** The bytes the token stands for, once, to the request they were written for; undefined for an ordinary answer's text. */
  take(text: string, request: object | undefined): Buffer | undefined {
    if (text !== TOKEN) return undefined;
    const bytes = request && this.waiting.get(request);
    // Never the token itself as an answer.
    if (!bytes) throw new Error("a prerendered answer was taken twice or by another request");
    this.waiting.delete(request);
    return bytes;
  }
}

/** `JSON.stringify(result) + "\n"` as UTF-8, encoded once from the one string. */
function jsonBytes(result: FormattedExecutionResult): Buffer {
  const text = JSON.stringify(result);
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(text) + 1);
  bytes[bytes.write(text)] = 0x0a;
  return bytes;
}

/** Starts with a NUL: never the JSON text of an answer, which starts with "{". */
const TOKEN = "\u0000prerendered answer";
