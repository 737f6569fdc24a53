-- CreateTable
CREATE TABLE "node_usage_sample" (
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "seconds" INTEGER NOT NULL,
    "cpu_usage" INTEGER,
    "memory_usage" DOUBLE PRECISION,
    "cpu_requests" INTEGER NOT NULL,
    "memory_requests" DOUBLE PRECISION NOT NULL,
    "cpu_usage_peak" INTEGER,
    "memory_usage_peak" DOUBLE PRECISION,
    "cpu_requests_peak" INTEGER,
    "memory_requests_peak" DOUBLE PRECISION,

    CONSTRAINT "node_usage_sample_pkey" PRIMARY KEY ("cluster","at","node","seconds")
);
