-- CreateTable
CREATE TABLE "history_leadership" (
    "cluster" TEXT NOT NULL,
    "epoch" BIGINT NOT NULL,
    "holder" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "history_leadership_pkey" PRIMARY KEY ("cluster")
);
