import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync, unwatchFile, watchFile, type Stats } from "node:fs";
import { ConfigError } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import { ROLES, type Role } from "./principal.js";

/** One caller of the tokens file; only the token's SHA-256 is kept in memory. */
export interface TokenEntry {
  subject: string;
  role: Role;
  digest: Buffer;
}

/** Shorter plain tokens are refused: they could be guessed. */
export const MIN_TOKEN_LENGTH = 16;

const ENTRY_KEYS = new Set(["subject", "role", "token", "sha256"]);

export function sha256(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/**
 * Parses the tokens file: a JSON array of `{ subject, role, token }` or `{ subject, role,
 * sha256 }`. A problem is one ConfigError line naming the file and the entry's index; no
 * message ever contains a token or a digest (JSON.parse's own message quotes the text, so it
 * is not passed on).
 */
export function parseTokensFile(text: string, file: string): TokenEntry[] {
  const fail = (what: string) => new ConfigError(`tokens file ${file}: ${what}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const at = /position (\d+)/.exec((error as Error).message)?.[1];
    throw fail(`not valid JSON${at === undefined ? "" : ` (at line ${lineOf(text, Number(at))})`}`);
  }
  if (!Array.isArray(parsed)) throw fail('must be a JSON array of { "subject", "role", "token" | "sha256" }');
  const seen = new Map<string, number>();
  return parsed.map((entry: unknown, index) => {
    const bad = (what: string) => fail(`entry [${index}]: ${what}`);
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw bad("must be an object");
    const fields = entry as Record<string, unknown>;
    const unknown = Object.keys(fields).find((key) => !ENTRY_KEYS.has(key));
    if (unknown !== undefined) throw bad(`unknown key "${unknown}" (expected subject, role, and token or sha256)`);
    const { subject, role, token, sha256: hex } = fields;
    if (typeof subject !== "string" || subject.trim() === "") throw bad('"subject" must be a non-empty string');
    if (typeof role !== "string" || !ROLES.includes(role as Role)) throw bad(`"role" must be one of ${ROLES.join(", ")}`);
    if ((token === undefined) === (hex === undefined)) throw bad('needs exactly one of "token" and "sha256"');
    let digest: Buffer;
    if (token !== undefined) {
      if (typeof token !== "string" || token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
        throw bad(`"token" must be a string of at least ${MIN_TOKEN_LENGTH} characters without spaces`);
      }
      digest = sha256(token);
    } else {
      if (typeof hex !== "string" || !/^[0-9a-fA-F]{64}$/.test(hex)) throw bad('"sha256" must be 64 hexadecimal digits');
      digest = Buffer.from(hex, "hex");
    }
    const key = digest.toString("hex");
    const earlier = seen.get(key);
    if (earlier !== undefined) throw bad(`has the same token as entry [${earlier}]`);
    seen.set(key, index);
    return { subject, role: role as Role, digest };
  });
}

function lineOf(text: string, position: number): number {
  return text.slice(0, position).split("\n").length;
}

/** Reads and parses the file; an unreadable file is a ConfigError too. */
export function readTokensFile(file: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`tokens file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  return parseTokensFile(text, file);
}

/**
 * The tokens of the tokens file, looked up in constant time, and re-read whenever the file
 * changes (polled by stat, which also sees a Kubernetes Secret volume swap its symlink), so
 * tokens rotate without a restart. A file that turns bad keeps the tokens last read.
 */
export class TokenStore {
  private entries: TokenEntry[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly onChange = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    try {
      this.entries = readTokensFile(this.file);
      this.logger.info({ file: this.file, tokens: this.entries.length }, "tokens file re-read");
      for (const listener of this.listeners) listener();
    } catch (error) {
      this.logger.error({ file: this.file, problem: (error as Error).message }, "tokens file changed but cannot be used: keeping the tokens read before");
    }
  };

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
    private readonly pollMs = 2_000,
  ) {}

  /** Reads the file (throws ConfigError if it is bad) and starts watching it. */
  start(): void {
    this.entries = readTokensFile(this.file);
    watchFile(this.file, { interval: this.pollMs, persistent: false }, this.onChange);
  }

  stop(): void {
    unwatchFile(this.file, this.onChange);
  }

  /** Calls `listener` after each re-read that changed the tokens; returns how to stop. */
  onReload(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The entry whose token this is. Every entry is compared, with timingSafeEqual on the
   * digests, so the time taken tells nothing about how close a guess was.
   */
  lookup(token: string): TokenEntry | undefined {
    const digest = sha256(token);
    let found: TokenEntry | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry;
    }
    return found;
  }
}
