/**
 * Three independent Kubernetes clients behind one interface, for the fidelity
 * suite: the real kubectl, the official Python client (Debian's
 * python3-kubernetes, run by /usr/bin/python3 through
 * fixtures/python-client.py) and @kubernetes/client-node. Each operation is
 * done the way a user of that client does it, and answers either what the
 * client returned or how the server refused it: the Status (Python,
 * client-node) or the text kubectl printed.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AuthorizationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, Metrics, PatchStrategy, Watch, setHeaderOptions } from "@kubernetes/client-node";
import { runKubectl } from "./support.js";

export interface Refusal {
  code?: number;
  reason?: string;
  message?: string;
  details?: any;
  /** What kubectl printed on stderr. */
  text?: string;
}

export type Outcome<T> = { ok: T; refused?: undefined } | { ok?: undefined; refused: Refusal };

export type PatchType = "json" | "merge" | "strategic" | "apply";

export interface WatchEvent {
  type: string;
  name: string;
}

export interface FidelityClient {
  name: "kubectl" | "python" | "client-node";
  listPods(namespace: string, selectors: { labelSelector?: string; fieldSelector?: string }): Promise<Outcome<{ names: string[]; resourceVersion: string }>>;
  /** Every pod of a namespace by pages of `limit`; `pages` is how many requests it took. */
  pagedPods(namespace: string, limit: number): Promise<Outcome<{ names: string[]; pages: number }>>;
  /** A watch of ConfigMaps from `resourceVersion` with bookmarks, until the server ends it after `timeoutSeconds`. */
  watchConfigMaps(namespace: string, resourceVersion: string, timeoutSeconds: number): Promise<Outcome<WatchEvent[]>>;
  /** A pod list with raw query parameters (what the strictness checks send). */
  listPodsWith(namespace: string, query: { limit?: string; resourceVersion?: string; resourceVersionMatch?: string }): Promise<Outcome<unknown>>;
  createNamespace(name: string): Promise<Outcome<unknown>>;
  createConfigMap(namespace: string, name: string, data: Record<string, string>): Promise<Outcome<unknown>>;
  /** A patch of a ConfigMap; an apply sends `body` as the whole configuration. */
  patchConfigMap(namespace: string, name: string, type: PatchType, body: unknown, apply?: { manager: string; force?: boolean }): Promise<Outcome<{ data: Record<string, string>; labels: Record<string, string> }>>;
  evict(namespace: string, pod: string): Promise<Outcome<unknown>>;
  canI(verb: string, resource: string, namespace: string): Promise<Outcome<boolean>>;
  token(namespace: string, serviceAccount: string, seconds: number): Promise<Outcome<string>>;
  nodeMetricNames(): Promise<Outcome<string[]>>;
}

// ---------------------------------------------------------------- kubectl

/** The clients against one kubeconfig file (and its text, for client-node). */
export function fidelityClients(kubeconfigPath: string, kubeconfigText: string): FidelityClient[] {
  return [kubectlClient(kubeconfigPath), pythonClient(kubeconfigPath), clientNode(kubeconfigText)];
}

function kubectlClient(kubeconfig: string): FidelityClient {
  const run = async (args: string[], input?: string): Promise<Outcome<string>> => {
    const r = await runKubectl(kubeconfig, args, input === undefined ? {} : { input });
    return r.code === 0 ? { ok: r.stdout } : { refused: { text: r.stderr.trim() } };
  };
  const json = async <T>(args: string[], pick: (v: any) => T, input?: string): Promise<Outcome<T>> => {
    const r = await run(args, input);
    return r.refused ? r : { ok: pick(JSON.parse(r.ok)) };
  };
  const query = (q: Record<string, string | undefined>) => new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  return {
    name: "kubectl",
    listPods: (ns, s) => json(["get", "pods", "-n", ns, ...(s.labelSelector ? ["-l", s.labelSelector] : []), ...(s.fieldSelector ? ["--field-selector", s.fieldSelector] : []), "-o", "json"], (l) => ({ names: l.items.map((i: any) => i.metadata.name), resourceVersion: l.metadata.resourceVersion })),
    async pagedPods(ns, limit) {
      const r = await runKubectl(kubeconfig, ["get", "pods", "-n", ns, `--chunk-size=${limit}`, "-o", "json", "-v=6"]);
      if (r.code !== 0) return { refused: { text: r.stderr.trim() } };
      const pages = r.stderr.split("\n").filter((l) => /GET \S+\/pods\?\S*limit=/.test(l)).length;
      return { ok: { names: JSON.parse(r.stdout).items.map((i: any) => i.metadata.name), pages } };
    },
    async watchConfigMaps(ns, rv, timeoutSeconds) {
      // kubectl get -w cannot start at a resourceVersion; --raw streams the watch as the server sends it.
      const r = await run(["get", "--raw", `/api/v1/namespaces/${ns}/configmaps?${query({ watch: "true", resourceVersion: rv, allowWatchBookmarks: "true", timeoutSeconds: String(timeoutSeconds) })}`]);
      if (r.refused) return r;
      return { ok: r.ok.split("\n").filter(Boolean).map((l) => JSON.parse(l)).map((e) => ({ type: e.type, name: e.object.metadata.name ?? "" })) };
    },
    listPodsWith: (ns, q) => run(["get", "--raw", `/api/v1/namespaces/${ns}/pods?${query(q)}`]),
    createNamespace: (name) => run(["create", "namespace", name]),
    createConfigMap: (ns, name, data) => run(["create", "configmap", name, "-n", ns, ...Object.entries(data).map(([k, v]) => `--from-literal=${k}=${v}`)]),
    patchConfigMap(ns, name, type, body, apply) {
      const pick = (cm: any) => ({ data: cm.data ?? {}, labels: cm.metadata.labels ?? {} });
      if (type === "apply") return json(["apply", "--server-side", `--field-manager=${apply!.manager}`, ...(apply!.force ? ["--force-conflicts"] : []), "-n", ns, "-f", "-", "-o", "json"], pick, JSON.stringify(body));
      return json(["patch", "configmap", name, "-n", ns, `--type=${type}`, "-p", JSON.stringify(body), "-o", "json"], pick);
    },
    async evict(ns, pod) {
      // kubectl evicts by draining (create --raw sends no Content-Type, which the simulator's guards refuse).
      const got = await json(["get", "pod", pod, "-n", ns, "-o", "json"], (p) => p);
      if (got.refused) return got;
      const selector = Object.entries((got.ok.metadata.labels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(",");
      const r = await runKubectl(kubeconfig, ["drain", got.ok.spec.nodeName, `--pod-selector=${selector}`, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=3s"]);
      await runKubectl(kubeconfig, ["uncordon", got.ok.spec.nodeName]);
      const refusal = r.stderr.split("\n").find((l) => l.startsWith(`error when evicting pods/${JSON.stringify(pod)}`));
      if (refusal) return { refused: { text: refusal.trim() } };
      // An accepted eviction is announced; drain then waits (past its timeout here) for the pod to go.
      if (`${r.stdout}${r.stderr}`.includes(`evicting pod ${ns}/${pod}`)) return { ok: r.stdout };
      return { refused: { text: r.stderr.trim() } };
    },
    async canI(verb, resource, ns) {
      const r = await runKubectl(kubeconfig, ["auth", "can-i", verb, resource, "-n", ns]);
      // can-i answers yes (exit 0) or no (exit 1) on stdout; anything else is a refusal.
      if (r.stdout.trim() === "yes" || r.stdout.trim() === "no") return { ok: r.stdout.trim() === "yes" };
      return { refused: { text: r.stderr.trim() } };
    },
    async token(ns, sa, seconds) {
      const r = await run(["create", "token", sa, "-n", ns, `--duration=${seconds}s`]);
      return r.refused ? r : { ok: r.ok.trim() };
    },
    async nodeMetricNames() {
      const r = await run(["top", "node", "--no-headers"]);
      return r.refused ? r : { ok: r.ok.trim().split("\n").map((l) => l.split(/\s+/)[0]!) };
    },
  };
}

// ---------------------------------------------------------------- Python

const PYTHON = "/usr/bin/python3";
const PYTHON_DRIVER = fileURLToPath(new URL("../../../test/sim/fixtures/python-client.py", import.meta.url));

type PythonStep = Record<string, unknown>;
type PythonResult = { ok?: any; status?: number; body?: any };

/** Run steps through the Python client; rejects (never skips) when python3-kubernetes is missing. */
export function runPython(kubeconfig: string, steps: PythonStep[]): Promise<PythonResult[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(PYTHON, [PYTHON_DRIVER, kubeconfig], { timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`the Python client failed (is python3-kubernetes installed? scripts/test-prerequisites.sh installs it): ${stderr || err.message}`));
      resolve(JSON.parse(stdout) as PythonResult[]);
    });
    child.stdin!.end(JSON.stringify(steps));
  });
}

function pythonClient(kubeconfig: string): FidelityClient {
  const one = async <T>(step: PythonStep, pick: (v: any) => T): Promise<Outcome<T>> => {
    const [r] = await runPython(kubeconfig, [step]);
    if (r!.status !== undefined) return { refused: { code: r!.status, ...(typeof r!.body === "object" ? r!.body : { message: r!.body }) } };
    return { ok: pick(r!.ok) };
  };
  const same = (v: unknown) => v;
  const pickCm = (cm: any) => ({ data: cm.data ?? {}, labels: cm.metadata.labels ?? {} });
  return {
    name: "python",
    listPods: (ns, s) => one({ call: "CoreV1Api.list_namespaced_pod", args: [ns], kwargs: { ...(s.labelSelector ? { label_selector: s.labelSelector } : {}), ...(s.fieldSelector ? { field_selector: s.fieldSelector } : {}) } }, (l) => ({ names: l.items.map((i: any) => i.metadata.name), resourceVersion: l.metadata.resourceVersion })),
    async pagedPods(ns, limit) {
      const names: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const r = await one({ call: "CoreV1Api.list_namespaced_pod", args: [ns], kwargs: { limit, ...(token ? { _continue: token } : {}) } }, same);
        if (r.refused) return r;
        pages++;
        names.push(...(r.ok as any).items.map((i: any) => i.metadata.name));
        token = (r.ok as any).metadata._continue ?? (r.ok as any).metadata.continue;
      } while (token);
      return { ok: { names, pages } };
    },
    watchConfigMaps: (ns, rv, timeoutSeconds) => one({ watch: "CoreV1Api.list_namespaced_config_map", args: [ns], kwargs: { resource_version: rv, allow_watch_bookmarks: true, timeout_seconds: timeoutSeconds }, max: 1000 }, (events: any[]) => events.map((e) => ({ type: e.type, name: e.name ?? "" }))),
    listPodsWith: (ns, q) => one({ call: "CoreV1Api.list_namespaced_pod", args: [ns], kwargs: { ...(q.limit !== undefined ? { limit: q.limit } : {}), ...(q.resourceVersion !== undefined ? { resource_version: q.resourceVersion } : {}), ...(q.resourceVersionMatch !== undefined ? { resource_version_match: q.resourceVersionMatch } : {}) } }, same),
    createNamespace: (name) => one({ call: "CoreV1Api.create_namespace", args: [{ metadata: { name } }] }, same),
    createConfigMap: (ns, name, data) => one({ call: "CoreV1Api.create_namespaced_config_map", args: [ns, { metadata: { name }, data }] }, same),
    patchConfigMap(ns, name, type, body, apply) {
      // CoreV1Api sends a list as a JSON patch and an object as a strategic merge patch; the dynamic client does the rest.
      if (type === "json" || type === "strategic") return one({ call: "CoreV1Api.patch_namespaced_config_map", args: [name, ns, body] }, pickCm);
      if (type === "merge") return one({ dynamic: "patch", apiVersion: "v1", kind: "ConfigMap", kwargs: { name, namespace: ns, body, content_type: "application/merge-patch+json" } }, pickCm);
      // This client sends an apply body only as text (an object has no encoding for application/apply-patch+yaml).
      return one({ dynamic: "server_side_apply", apiVersion: "v1", kind: "ConfigMap", kwargs: { name, namespace: ns, body: JSON.stringify(body), field_manager: apply!.manager, ...(apply!.force ? { force_conflicts: true } : {}) } }, pickCm);
    },
    evict: (ns, pod) => one({ call: "CoreV1Api.create_namespaced_pod_eviction", args: [pod, ns, { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod, namespace: ns } }] }, same),
    canI: (verb, resource, ns) => one({ call: "AuthorizationV1Api.create_self_subject_access_review", args: [{ spec: { resourceAttributes: { verb, resource, namespace: ns } } }] }, (r) => r.status.allowed === true),
    token: (ns, sa, seconds) => one({ call: "CoreV1Api.create_namespaced_service_account_token", args: [sa, ns, { spec: { expirationSeconds: seconds } }] }, (r) => r.status.token),
    nodeMetricNames: () => one({ call: "CustomObjectsApi.list_cluster_custom_object", args: ["metrics.k8s.io", "v1beta1", "nodes"] }, (l) => l.items.map((i: any) => i.metadata.name)),
  };
}

// ---------------------------------------------------------------- client-node

function clientNode(kubeconfigText: string): FidelityClient {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigText);
  const core = kc.makeApiClient(CoreV1Api);
  const authz = kc.makeApiClient(AuthorizationV1Api);
  kc.makeApiClient(CustomObjectsApi);
  const attempt = async <T>(call: () => Promise<T>): Promise<Outcome<T>> => {
    try {
      return { ok: await call() };
    } catch (err) {
      const e = err as { code?: number; body?: unknown };
      if (typeof e.code !== "number") throw err;
      const body = typeof e.body === "string" ? (JSON.parse(e.body) as object) : (e.body as object);
      return { refused: { code: e.code, ...body } };
    }
  };
  const patchTypes: Record<PatchType, string> = { json: PatchStrategy.JsonPatch, merge: PatchStrategy.MergePatch, strategic: PatchStrategy.StrategicMergePatch, apply: PatchStrategy.ServerSideApply };
  return {
    name: "client-node",
    listPods: (ns, s) =>
      attempt(async () => {
        const l = await core.listNamespacedPod({ namespace: ns, ...s });
        return { names: l.items.map((i) => i.metadata!.name!), resourceVersion: l.metadata!.resourceVersion! };
      }),
    pagedPods: (ns, limit) =>
      attempt(async () => {
        const names: string[] = [];
        let token: string | undefined;
        let pages = 0;
        do {
          const l = await core.listNamespacedPod({ namespace: ns, limit, ...(token ? { _continue: token } : {}) });
          pages++;
          names.push(...l.items.map((i) => i.metadata!.name!));
          token = l.metadata?._continue;
        } while (token);
        return { names, pages };
      }),
    watchConfigMaps: (ns, rv, timeoutSeconds) =>
      new Promise((resolve) => {
        const events: WatchEvent[] = [];
        void new Watch(kc).watch(
          `/api/v1/namespaces/${ns}/configmaps`,
          { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds },
          (type, obj) => events.push({ type, name: obj?.metadata?.name ?? "" }),
          (err) => resolve(err ? { refused: { message: String(err) } } : { ok: events }),
        );
      }),
    listPodsWith: (ns, q) => attempt(() => core.listNamespacedPod({ namespace: ns, ...(q.limit !== undefined ? { limit: q.limit as unknown as number } : {}), ...(q.resourceVersion !== undefined ? { resourceVersion: q.resourceVersion } : {}), ...(q.resourceVersionMatch !== undefined ? { resourceVersionMatch: q.resourceVersionMatch } : {}) })),
    createNamespace: (name) => attempt(() => core.createNamespace({ body: { metadata: { name } } })),
    createConfigMap: (ns, name, data) => attempt(() => core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data } })),
    patchConfigMap: (ns, name, type, body, apply) =>
      attempt(async () => {
        const cm = await core.patchNamespacedConfigMap({ name, namespace: ns, body: body as object, ...(apply ? { fieldManager: apply.manager, ...(apply.force ? { force: true } : {}) } : {}) }, setHeaderOptions("Content-Type", patchTypes[type]));
        return { data: cm.data ?? {}, labels: cm.metadata?.labels ?? {} };
      }),
    evict: (ns, pod) => attempt(() => core.createNamespacedPodEviction({ name: pod, namespace: ns, body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod, namespace: ns } } })),
    canI: (verb, resource, ns) => attempt(async () => (await authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb, resource, namespace: ns } } } })).status!.allowed),
    token: (ns, sa, seconds) => attempt(async () => (await core.createNamespacedServiceAccountToken({ name: sa, namespace: ns, body: { spec: { audiences: [], expirationSeconds: seconds } } })).status!.token),
    nodeMetricNames: () => attempt(async () => (await new Metrics(kc).getNodeMetrics()).items.map((i) => i.metadata.name)),
  };
}

/** What kubectl prints for a Status (cmdutil's StandardErrorMessage). */
export function kubectlMessage(status: { reason: string; message: string; details?: { kind?: string; name?: string; causes?: { field?: string; message?: string }[] } }): string {
  if (status.reason === "Invalid" && status.details) {
    const causes = (status.details.causes ?? []).map((c) => (c.field ? `${c.field}: ${c.message}` : c.message ?? ""));
    const head = `The ${status.details.kind} ${JSON.stringify(status.details.name ?? "")} is invalid`;
    return causes.length ? `${head}: ${causes.length > 1 ? `[${causes.join(", ")}]` : causes[0]}` : head;
  }
  return `Error from server (${status.reason}): ${status.message}`;
}
