-- AlterTable
ALTER TABLE "drain_operation" ADD COLUMN     "heartbeat_at" TIMESTAMPTZ(3),
ADD COLUMN     "owner" TEXT,
ADD COLUMN     "warnings" JSONB NOT NULL DEFAULT '[]';
