import { AppError, ErrorCode } from "../graphql/errors.js";

/**
 * The one rule for a cluster named by a caller: if it is not configured, the answer is
 * NOT_FOUND, whatever asks (queries, history, reports, subscriptions, the CLI through them).
 * An empty answer would look like a cluster with nothing to say.
 */
export function assertConfiguredCluster(clusters: { names(): string[] }, name: string | null | undefined): void {
  if (name == null) return;
  const names = clusters.names();
  if (!names.includes(name)) {
    throw new AppError(ErrorCode.NOT_FOUND, `cluster "${name}" is not configured (clusters: ${names.join(", ") || "none"})`);
  }
}
