-- CreateTable
CREATE TABLE "node_event" (
    "id" BIGSERIAL NOT NULL,
    "cluster" TEXT NOT NULL,
    "uid" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "object_key" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "message" TEXT,
    "count" INTEGER NOT NULL,
    "first_seen" TIMESTAMPTZ(3),
    "last_seen" TIMESTAMPTZ(3) NOT NULL,
    "source" TEXT,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "node_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "node_event_last_seen_id_idx" ON "node_event"("last_seen" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "node_event_cluster_node_last_seen_id_idx" ON "node_event"("cluster", "node", "last_seen" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "node_event_cluster_uid_key" ON "node_event"("cluster", "uid");
