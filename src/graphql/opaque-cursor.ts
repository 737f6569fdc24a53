import { AppError, ErrorCode } from "./errors.js";

/** A cursor clients must not read into: base64url of a small JSON payload. */
export function encodeOpaqueCursor(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
}

/**
 * The payload of a cursor made by {@link encodeOpaqueCursor}, still to be checked by the
 * caller for its own shape. Garbage is BAD_USER_INPUT with `message`.
 */
export function decodeOpaqueCursor(cursor: string, message: string): unknown {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new AppError(ErrorCode.BAD_USER_INPUT, message);
  }
}
