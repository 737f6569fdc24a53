import type { Logger } from "../log/logger.js";

/** Built fresh for every request or subscription operation; never shared between them. */
export interface RequestContext {
  requestId: string;
  logger: Logger;
}
