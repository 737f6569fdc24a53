-- CreateTable
CREATE TABLE "recording_coverage" (
    "id" BIGSERIAL NOT NULL,
    "cluster" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "recording_coverage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "recording_coverage_cluster_ended_at_idx" ON "recording_coverage"("cluster", "ended_at");

-- History recorded before coverage was: each cluster counts as watched from the first node
-- it recorded to now, as the report assumed until then (its gaps are not known).
INSERT INTO "recording_coverage" ("cluster", "started_at", "ended_at")
SELECT "cluster", min("first_seen_at"), CURRENT_TIMESTAMP FROM "node_state" GROUP BY "cluster";
