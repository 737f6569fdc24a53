-- CreateTable
CREATE TABLE "installation" (
    "id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "installation_pkey" PRIMARY KEY ("id")
);

-- The installation's one row, its id made here, once: replicas sharing this database share
-- it (and so one history Lease); another installation's database has its own.
INSERT INTO "installation" ("id") VALUES (gen_random_uuid()::text);
