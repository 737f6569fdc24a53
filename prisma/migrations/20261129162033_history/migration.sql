-- CreateTable
CREATE TABLE "node_state" (
    "cluster" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "uid" TEXT NOT NULL,
    "conditions" JSONB NOT NULL,
    "unschedulable" BOOLEAN NOT NULL,
    "kubelet_version" TEXT NOT NULL,
    "container_runtime" TEXT NOT NULL,
    "labels" JSONB NOT NULL,
    "taints" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "node_state_pkey" PRIMARY KEY ("cluster","name")
);

-- CreateTable
CREATE TABLE "condition_transition" (
    "id" BIGSERIAL NOT NULL,
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "from" TEXT,
    "to" TEXT NOT NULL,
    "reason" TEXT,
    "message" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "reconciled" BOOLEAN NOT NULL DEFAULT false,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "condition_transition_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "node_change" (
    "id" BIGSERIAL NOT NULL,
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "field" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "key" TEXT NOT NULL,
    "reconciled" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "node_change_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "maintenance_event" (
    "id" BIGSERIAL NOT NULL,
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "operation_id" UUID,
    "pod" TEXT,
    "detail" TEXT,
    "dedupe_key" TEXT NOT NULL,

    CONSTRAINT "maintenance_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "drain_operation" (
    "id" UUID NOT NULL,
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "dry_run" BOOLEAN NOT NULL,
    "requested_by" TEXT NOT NULL,
    "reason" TEXT,
    "options" JSONB NOT NULL,
    "pods" JSONB NOT NULL,
    "message" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "drain_operation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "condition_transition_at_id_idx" ON "condition_transition"("at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "condition_transition_cluster_node_at_id_idx" ON "condition_transition"("cluster", "node", "at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "condition_transition_cluster_node_type_at_to_key" ON "condition_transition"("cluster", "node", "type", "at", "to");

-- CreateIndex
CREATE INDEX "node_change_cluster_node_at_idx" ON "node_change"("cluster", "node", "at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "node_change_cluster_node_field_key_key" ON "node_change"("cluster", "node", "field", "key");

-- CreateIndex
CREATE UNIQUE INDEX "maintenance_event_dedupe_key_key" ON "maintenance_event"("dedupe_key");

-- CreateIndex
CREATE INDEX "maintenance_event_at_id_idx" ON "maintenance_event"("at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "maintenance_event_cluster_node_at_id_idx" ON "maintenance_event"("cluster", "node", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "maintenance_event_operation_id_idx" ON "maintenance_event"("operation_id");

-- CreateIndex
CREATE INDEX "drain_operation_cluster_node_status_idx" ON "drain_operation"("cluster", "node", "status");
