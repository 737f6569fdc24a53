/**
 * In-cluster mode: KUBERNETES_SERVICE_HOST/PORT and a service account directory (token, ca.crt,
 * namespace) are all the service needs to watch the cluster it runs in, and a token the kubelet
 * rotates is used from the next request on.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile, rename, symlink, mkdir, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { inClusterAvailable, inClusterKubeConfig } from "../../src/cluster/in-cluster.js";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import { startProgram } from "../support/program.js";

/** The header client-node would send with a request made through this KubeConfig. */
async function authorization(kubeConfig: KubeConfig): Promise<unknown> {
  const options: { headers: Record<string, string> } = { headers: {} };
  await kubeConfig.applyToHTTPSOptions(options);
  return options.headers["Authorization"];
}

describe("in-cluster credentials", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ni-sa-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("used only with the apiserver's address in the environment and a token in the directory", async () => {
    const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };
    assert.equal(inClusterAvailable(dir, env), false, "no token yet");
    await writeFile(join(dir, "token"), "first-token\n");
    assert.equal(inClusterAvailable(dir, env), true);
    assert.equal(inClusterAvailable(dir, { KUBERNETES_SERVICE_HOST: "10.96.0.1" }), false);
    assert.equal(inClusterAvailable(dir, {}), false);
  });

  test("the apiserver over HTTPS at the service address, trusted through ca.crt, in the pod's namespace", async () => {
    await writeFile(join(dir, "token"), "first-token\n");
    await writeFile(join(dir, "namespace"), "node-inventory");
    const v4 = inClusterKubeConfig(dir, { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" });
    assert.equal(v4.getCurrentCluster()?.server, "https://10.96.0.1:443");
    assert.equal(v4.getCurrentCluster()?.caFile, join(dir, "ca.crt"));
    assert.equal(v4.getContextObject(v4.getCurrentContext())?.namespace, "node-inventory");
    const v6 = inClusterKubeConfig(dir, { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" });
    assert.equal(v6.getCurrentCluster()?.server, "https://[fd00::1]:6443");
  });

  test("a token the kubelet rotates (a new file swapped in through ..data) is sent from the next request on", async () => {
    // The kubelet's layout: token -> ..data/token, ..data -> a timestamped directory, swapped atomically.
    const rotating = await mkdtemp(join(tmpdir(), "ni-sa-rotating-"));
    try {
      await mkdir(join(rotating, "v1"));
      await writeFile(join(rotating, "v1", "token"), "token-one");
      await symlink("v1", join(rotating, "..data"));
      await symlink("..data/token", join(rotating, "token"));
      await writeFile(join(rotating, "ca.crt"), "");
      const kubeConfig = inClusterKubeConfig(rotating, { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: "6443" });
      assert.equal(await authorization(kubeConfig), "Bearer token-one");
      assert.equal(await authorization(kubeConfig), "Bearer token-one");
      await mkdir(join(rotating, "v2"));
      await writeFile(join(rotating, "v2", "token"), "token-two");
      await symlink("v2", join(rotating, "..data_tmp"));
      await rename(join(rotating, "..data_tmp"), join(rotating, "..data"));
      assert.equal(await authorization(kubeConfig), "Bearer token-two");
      // Even a rewrite in place of the same length is seen.
      await unlink(join(rotating, "v2", "token"));
      await writeFile(join(rotating, "v2", "token"), "token-2wo");
      assert.equal(await authorization(kubeConfig), "Bearer token-2wo");
    } finally {
      await rm(rotating, { recursive: true, force: true });
    }
  });
});

describe("the real program in-cluster", () => {
  let sim: Simulator;
  let dir: string;
  before(async () => {
    sim = await startSimulator({ nodes: 4, seed: 3, tls: true, name: "tls-sim" });
    dir = await mkdtemp(join(tmpdir(), "ni-sa-program-"));
    const ca = new KubeConfig();
    ca.loadFromString(sim.kubeconfig());
    await writeFile(join(dir, "ca.crt"), Buffer.from(ca.getCurrentCluster()!.caData!, "base64"));
    await writeFile(join(dir, "token"), "a-service-account-token");
    await writeFile(join(dir, "namespace"), "node-inventory");
  });
  after(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("with no kubeconfig, KUBERNETES_SERVICE_HOST/PORT and --service-account-dir, it watches the cluster it runs in", async () => {
    const port = new URL(sim.url).port;
    const program = await startProgram(["--port", "0", "--data-dir", "memory", "--service-account-dir", dir, "--simulator-fallback", "false"], {
      KUBERNETES_SERVICE_HOST: "127.0.0.1",
      KUBERNETES_SERVICE_PORT: port,
    });
    try {
      const res = await fetch(`${program.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ clusters { name simulated } nodes { totalCount } }" }),
      });
      const body = (await res.json()) as { data: { clusters: { name: string; simulated: boolean }[]; nodes: { totalCount: number } } };
      assert.deepEqual(body.data, { clusters: [{ name: "in-cluster", simulated: false }], nodes: { totalCount: 4 } });
      const watching = program
        .stdout()
        .split("\n")
        .filter((l) => l.includes('"watching clusters"'))
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        watching.map((l) => [l.source, l.clusters]),
        [["in-cluster", ["in-cluster"]]],
      );
    } finally {
      assert.equal((await program.terminate()).code, 0);
    }
  });
});
