-- DropIndex
DROP INDEX "node_change_cluster_node_at_idx";

-- DropIndex
DROP INDEX "node_change_cluster_node_field_key_key";

-- AlterTable
ALTER TABLE "node_change" ADD COLUMN     "actor" TEXT,
ADD COLUMN     "item" TEXT NOT NULL DEFAULT '';

-- AlterTable
ALTER TABLE "node_state" ADD COLUMN     "boot_id" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "change_note" TEXT;

-- CreateIndex
CREATE INDEX "drain_operation_started_at_id_idx" ON "drain_operation"("started_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "node_change_at_id_idx" ON "node_change"("at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "node_change_cluster_node_at_id_idx" ON "node_change"("cluster", "node", "at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "node_change_cluster_node_field_item_key_key" ON "node_change"("cluster", "node", "field", "item", "key");
