import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Simulator } from "../../src/sim/index.js";

/**
 * The simulator behind the apiserver's NamespaceLifecycle admission, which the simulator does
 * not have yet: an eviction of a pod whose namespace is Terminating gets the 403 the real
 * apiserver sends (reason Forbidden, cause NamespaceTerminating); everything else, watches
 * included, passes through unchanged. Lives here until the simulator (src/sim, being split
 * into apiserver parts) grows the admission itself.
 */
export interface NamespaceLifecycleProxy {
  url: string;
  /** A kubeconfig file for the simulator's cluster, pointing at the proxy. */
  kubeconfigPath: string;
  stop(): Promise<void>;
}

const EVICTION = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/eviction$/;

export async function startNamespaceLifecycleProxy(sim: Simulator): Promise<NamespaceLifecycleProxy> {
  const upstream = new URL(sim.url);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://proxy").pathname;
    const eviction = req.method === "POST" ? EVICTION.exec(path) : null;
    if (eviction) {
      const [, namespace, name] = eviction.map(decodeURIComponent) as [string, string, string];
      const phase = (sim.cluster.get("namespaces", namespace)?.status as { phase?: string } | undefined)?.phase;
      if (phase === "Terminating") {
        req.resume();
        const body = JSON.stringify({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `pods "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
          reason: "Forbidden",
          details: { name, kind: "pods", causes: [{ reason: "NamespaceTerminating", message: `namespace ${namespace} is being terminated`, field: "metadata.namespace" }] },
          code: 403,
        });
        res.writeHead(403, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
        return;
      }
    }
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", () => res.destroy());
    res.on("close", () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), "ni-ns-proxy-")), "config");
  writeFileSync(kubeconfigPath, sim.kubeconfig().split(sim.url).join(url));
  return {
    url,
    kubeconfigPath,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
