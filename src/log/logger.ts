import { pino, type Logger } from "pino";
import type { LogLevel } from "../config/config.js";

export type { Logger };

/**
 * JSON logs on stdout. `redact` is a second line of defence: code never logs credentials,
 * and if a header object slips into a log line its secrets are still masked.
 */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: "node-inventory" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ["req.headers.authorization", "req.headers.cookie", "*.password", "*.token", "*.databaseUrl"],
        censor: "[redacted]",
      },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
