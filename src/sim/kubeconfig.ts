/**
 * The kubeconfig that points kubectl and client-node at a simulator. Written
 * as YAML (kubectl and client-node both read it); context, cluster and user
 * all carry the simulator's name; the user is the administrator (its token is
 * bound to cluster-admin, which matters under `--rbac`).
 */

/** Kubeconfig text for a server URL. */
export function kubeconfigYaml(name: string, url: string, caData: string | undefined, token: string): string {
  const q = JSON.stringify(name);
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${q}`,
    "  cluster:",
    `    server: ${JSON.stringify(url)}`,
    // client-node refuses plain http unless TLS verification is marked as skipped.
    ...(caData ? [`    certificate-authority-data: ${caData}`] : url.startsWith("http:") ? ["    insecure-skip-tls-verify: true"] : []),
    "contexts:",
    `- name: ${q}`,
    "  context:",
    `    cluster: ${q}`,
    `    user: ${q}`,
    `current-context: ${q}`,
    "preferences: {}",
    "users:",
    `- name: ${q}`,
    "  user:",
    `    token: ${JSON.stringify(token)}`,
    "",
  ].join("\n");
}
