import type { Logger } from "../log/logger.js";

/** One piece of the running service with the way to stop it. */
export interface Part {
  readonly name: string;
  stop(): Promise<unknown> | unknown;
}

/**
 * The service as a list of parts, like oklog/run's actors or Backstage's plugin lifecycle:
 * each part is listed when it starts, and stopAll() stops them in the reverse order, so the
 * shutdown order follows from the start order instead of being kept beside it by hand.
 */
export class Parts {
  private readonly listed: Part[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Lists `part`, then runs `start`; a part whose start fails is still stopped by stopAll().
   * Throws PartsAborted afterwards when a stop was asked for meanwhile, which winds the start back.
   */
  async start<T>(part: Part, start: () => Promise<T> | T): Promise<T> {
    this.listed.push(part);
    const value = await start();
    this.throwIfAborted();
    return value;
  }

  /** Lists a part that is already running. */
  add(part: Part): void {
    this.listed.push(part);
  }

  /** Throws PartsAborted when a stop was asked for while starting. */
  throwIfAborted(): void {
    if (this.signal.aborted) throw new PartsAborted();
  }

  /** Stops every listed part, last started first; each runs even if an earlier one failed, so nothing is left open. */
  async stopAll(): Promise<void> {
    for (let part = this.listed.pop(); part; part = this.listed.pop()) {
      const began = Date.now();
      try {
        await part.stop();
        this.logger.debug({ step: part.name, ms: Date.now() - began }, "shutdown step done");
      } catch (error) {
        this.logger.warn({ err: error, step: part.name }, "shutdown step failed");
      }
    }
  }
}

/** What a start stopped midway throws to its own catch, which winds it back. */
export class PartsAborted extends Error {
  override name = "PartsAborted";
}
