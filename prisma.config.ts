import { defineConfig } from "prisma/config";

// Only `prisma generate` is run here (offline); migrations are applied by our own migrator.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
