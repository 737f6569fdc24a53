-- CreateTable
CREATE TABLE "node_usage_sample" (
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "cpu_usage" INTEGER,
    "memory_usage" DOUBLE PRECISION,
    "cpu_requests" INTEGER NOT NULL,
    "memory_requests" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "node_usage_sample_pkey" PRIMARY KEY ("cluster","at","node")
);

-- CreateTable
CREATE TABLE "node_usage_hourly" (
    "cluster" TEXT NOT NULL,
    "node" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "samples" INTEGER NOT NULL,
    "cpu_usage" INTEGER,
    "cpu_usage_peak" INTEGER,
    "memory_usage" DOUBLE PRECISION,
    "memory_usage_peak" DOUBLE PRECISION,
    "cpu_requests" INTEGER NOT NULL,
    "cpu_requests_peak" INTEGER NOT NULL,
    "memory_requests" DOUBLE PRECISION NOT NULL,
    "memory_requests_peak" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "node_usage_hourly_pkey" PRIMARY KEY ("cluster","at","node")
);

-- CreateTable
CREATE TABLE "cell_usage_sample" (
    "cluster" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "cell" TEXT NOT NULL,
    "pool" TEXT,
    "zone" TEXT,
    "instance_type" TEXT,
    "role" TEXT,
    "nodes" INTEGER NOT NULL,
    "cpu_usage" DOUBLE PRECISION,
    "memory_usage" DOUBLE PRECISION,
    "cpu_requests" DOUBLE PRECISION NOT NULL,
    "memory_requests" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "cell_usage_sample_pkey" PRIMARY KEY ("cluster","at","cell")
);

-- CreateTable
CREATE TABLE "cell_usage_hourly" (
    "cluster" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "cell" TEXT NOT NULL,
    "pool" TEXT,
    "zone" TEXT,
    "instance_type" TEXT,
    "role" TEXT,
    "samples" INTEGER NOT NULL,
    "cpu_usage" DOUBLE PRECISION,
    "cpu_usage_peak" DOUBLE PRECISION,
    "memory_usage" DOUBLE PRECISION,
    "memory_usage_peak" DOUBLE PRECISION,
    "cpu_requests" DOUBLE PRECISION NOT NULL,
    "cpu_requests_peak" DOUBLE PRECISION NOT NULL,
    "memory_requests" DOUBLE PRECISION NOT NULL,
    "memory_requests_peak" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "cell_usage_hourly_pkey" PRIMARY KEY ("cluster","at","cell")
);
