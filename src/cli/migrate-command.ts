import { configFrom, parseFlags, settingOptions, settingsHelp } from "../config/config.js";
import { openDatabase } from "../db/database.js";
import { migrate } from "../db/migrator.js";
import { createLogger } from "../log/logger.js";

const SETTINGS_USED = ["databaseUrl", "dataDir", "logLevel"] as const;

export const MIGRATE_HELP = `Usage: node-inventory migrate [options]

Applies the database migrations in prisma/migrations that are not yet applied, then exits.
\`serve\` does the same at start; this is for running it as a separate deploy step.

Options:
${settingsHelp(SETTINGS_USED)}
  --help                   show this help`;

export async function migrateCommand(argv: string[]): Promise<number> {
  const config = configFrom(parseFlags(argv, settingOptions(SETTINGS_USED)), process.env);
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  const database = await openDatabase(config.database);
  try {
    const applied = await database.withConnection((connection) => migrate(connection, logger));
    logger.info({ database: database.description, applied }, applied.length ? "migrations applied" : "database already up to date");
    return 0;
  } finally {
    await database.close();
  }
}
