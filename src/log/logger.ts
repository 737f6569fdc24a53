import { pino, type Logger } from "pino";
import pretty from "pino-pretty";
import { redactUrlsIn } from "./redact-url.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `json`: one JSON object a line (pino); `pretty`: coloured lines for a person at a terminal. */
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type { Logger };

/**
 * Logs on stdout: JSON lines (pino) for machines, or, for a person at a terminal, pino-pretty's
 * coloured lines (the default when stdout is a TTY). `redact` is a second line of defence: code
 * never logs credentials, and if a header object slips into a log line its secrets are still
 * masked, in either format.
 */
export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream, format?: LogFormat): Logger {
  const options = {
    level,
    base: { service: "node-inventory" },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "*.password", "*.token", "*.databaseUrl"],
      censor: "[redacted]",
    },
    // Also a second line of defence: a URL in a message or an error (a driver's, client-node's)
    // never shows a password or a credential-bearing query parameter.
    hooks: {
      logMethod(this: Logger, args: Parameters<Logger["info"]>, method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === "string" ? redactUrlsIn(arg) : arg)),
        );
      },
    },
    serializers: {
      err: (error: Error) => {
        const serialized = pino.stdSerializers.err(error);
        if (typeof serialized.message === "string") serialized.message = redactUrlsIn(serialized.message);
        if (typeof serialized.stack === "string") serialized.stack = redactUrlsIn(serialized.stack);
        return serialized;
      },
    },
  };
  const chosen = format ?? (destination === undefined && process.stdout.isTTY ? "pretty" : "json");
  if (chosen === "pretty") {
    // In-process (no worker thread): lines stay in order with everything else the process prints.
    const stream = pretty({
      ...(destination ? { destination } : { destination: 1 }),
      colorize: destination === undefined && Boolean(process.stdout.isTTY),
      translateTime: "SYS:HH:MM:ss.l",
      ignore: "pid,hostname,service",
      singleLine: true,
      sync: true,
    });
    return pino(options, stream);
  }
  return pino(options, destination ?? pino.destination({ fd: 1, sync: false }));
}
