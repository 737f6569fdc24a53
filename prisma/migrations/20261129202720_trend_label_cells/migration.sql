-- AlterTable
ALTER TABLE "cell_usage_hourly" ADD COLUMN     "labels" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "cell_usage_sample" ADD COLUMN     "labels" JSONB NOT NULL DEFAULT '{}';
