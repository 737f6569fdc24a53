-- CreateTable
CREATE TABLE "mutation_allowance" (
    "subject" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mutation_allowance_pkey" PRIMARY KEY ("subject")
);
