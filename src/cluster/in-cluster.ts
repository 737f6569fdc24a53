import { existsSync, readFileSync, statSync } from "node:fs";
import { isIPv6 } from "node:net";
import { join } from "node:path";
import { KubeConfig, type User } from "@kubernetes/client-node";

/** client-node does not export its Authenticator interface; addAuthenticator's parameter is it. */
type Authenticator = Parameters<KubeConfig["addAuthenticator"]>[0];

/** Where the kubelet mounts a pod's service account: token, ca.crt and namespace. */
export const DEFAULT_SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The name the in-cluster cluster goes by in the API (`clusters { name }`). */
export const IN_CLUSTER_NAME = "in-cluster";

/** Inside a pod: the apiserver's address in the environment and a service account token mounted. */
export function inClusterAvailable(dir: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(join(dir, "token")));
}

/**
 * A KubeConfig for the pod's own cluster, as client-go's rest.InClusterConfig builds one: the
 * apiserver at KUBERNETES_SERVICE_HOST:PORT over HTTPS, trusted through `dir`/ca.crt, with the
 * bearer token of `dir`/token. client-node's loadFromCluster only reads the standard path; this
 * honours --service-account-dir. The namespace file, if any, is the context's namespace.
 */
export function inClusterKubeConfig(dir: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const server = `https://${isIPv6(host) ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT}`;
  const namespaceFile = join(dir, "namespace");
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, "utf8").trim() : undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.addAuthenticator(new ServiceAccountTokenFile());
  kubeConfig.loadFromOptions({
    clusters: [{ name: IN_CLUSTER_NAME, server, caFile: join(dir, "ca.crt"), skipTLSVerify: false }],
    users: [{ name: IN_CLUSTER_NAME, authProvider: { name: TOKEN_FILE_PROVIDER, config: { path: join(dir, "token") } } }],
    contexts: [{ name: IN_CLUSTER_NAME, cluster: IN_CLUSTER_NAME, user: IN_CLUSTER_NAME, ...(namespace ? { namespace } : {}) }],
    currentContext: IN_CLUSTER_NAME,
  });
  return kubeConfig;
}

const TOKEN_FILE_PROVIDER = "node-inventory-service-account-token";

/**
 * The kubelet rotates a projected service account token (by default hourly, at 80% of its
 * life) by swapping the file. client-node's own file provider re-reads it only every 60 s; this
 * one checks the file at every request (a stat) and re-reads it as soon as it changed, so a
 * rotated token is used from the next request on and a revoked one is never sent for a minute.
 */
class ServiceAccountTokenFile implements Authenticator {
  private token = "";
  private version = "";

  isAuthProvider(user: User): boolean {
    return user.authProvider?.name === TOKEN_FILE_PROVIDER;
  }

  async applyAuthentication(user: User, opts: Parameters<Authenticator["applyAuthentication"]>[1]): Promise<void> {
    const path = user.authProvider.config.path as string;
    const stat = statSync(path);
    const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (version !== this.version) {
      this.token = readFileSync(path, "utf8").trim();
      this.version = version;
    }
    // client-node has set `headers` to an object before it asks an authenticator.
    (opts.headers as Record<string, string>)["Authorization"] = `Bearer ${this.token}`;
  }
}
