import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE_ROOT } from "../../src/package-info.js";
import { finished, readyUrl } from "../support/cli.js";
import { startSimWithKubeconfig, type SimWithKubeconfig } from "../support/sim-cluster.js";

const run = promisify(execFile);

/** The Dockerfile's runtime stage (its last), continuation lines joined. */
function runtimeStage(): string {
  const dockerfile = readFileSync(join(PACKAGE_ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  return dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
}

/** The runtime stage's exec-form instruction `name` (ENTRYPOINT, CMD, WORKDIR as a one-word list). */
function instruction(name: string): string[] {
  const line = runtimeStage()
    .split("\n")
    .find((l) => l.startsWith(`${name} `));
  assert.ok(line, `the Dockerfile's runtime stage has ${name}`);
  const value = line.slice(name.length + 1).trim();
  return value.startsWith("[") ? JSON.parse(value) : [value];
}

/** The environment the Dockerfile's runtime stage sets (its ENV lines). */
function imageEnvironment(): Record<string, string> {
  const runtime = runtimeStage();
  const env: Record<string, string> = {};
  for (const line of runtime.split("\n").filter((l) => l.startsWith("ENV "))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const at = pair.indexOf("=");
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

// The image runs as a non-root user (`node`); here, `nobody`: nothing of root's may be needed.
const NOBODY = 65534;
const TOKEN = "container-test-token-0123456789";

/**
 * The container image, short of building it (no Docker engine here): the Dockerfile's runtime
 * stage is what scripts/runtime-image.sh assembles, so the test assembles it the same way in
 * a temporary directory and runs `serve` from there as a non-root user with the image's
 * environment. A file the image lacks, or a dev dependency needed at run time, fails here.
 */
describe("the container image's contents, run as in the image", () => {
  const env = imageEnvironment();
  let root: string;
  let app: string;
  let sim: SimWithKubeconfig;
  let shared: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "ni-image-"));
    chmodSync(root, 0o755);
    app = join(root, "app");
    await run("bash", [join(PACKAGE_ROOT, "scripts", "runtime-image.sh"), PACKAGE_ROOT, app], { maxBuffer: 16 * 1024 * 1024 });
    // What the operator mounts: a kubeconfig and a tokens file, readable by the image's user.
    sim = await startSimWithKubeconfig({ nodes: 4, seed: 12 });
    shared = join(root, "mounted");
    mkdirSync(shared, { mode: 0o755 });
    writeFileSync(join(shared, "kubeconfig"), readFileSync(sim.kubeconfigPath), { mode: 0o644 });
    writeFileSync(join(shared, "tokens.json"), JSON.stringify([{ subject: "ops", role: "viewer", token: TOKEN }]), { mode: 0o644 });
    const data = join(root, "data");
    mkdirSync(data);
    chownSync(data, NOBODY, NOBODY);
  });
  after(async () => {
    await sim?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** The image's ENTRYPOINT and CMD (`serve`) in the assembled image (its WORKDIR here), as nobody, with the image's environment. */
  function serve(extra: Record<string, string>) {
    const [workdir] = instruction("WORKDIR");
    const command = [...instruction("ENTRYPOINT"), ...instruction("CMD")].map((arg) => (arg.startsWith(`${workdir}/`) ? join(app, arg.slice(workdir!.length + 1)) : arg));
    assert.deepEqual(command.slice(1), ["serve"]);
    return spawn(
      "setpriv",
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...command],
      // The image's environment; only the port (0: any free one) and the data volume's path differ.
      { cwd: app, env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/nonexistent", ...env, PORT: "0", DATA_DIR: join(root, "data"), ...extra }, stdio: "pipe" },
    );
  }

  test("holds production dependencies only, and the built explorer and web UI", () => {
    const modules = (name: string) => {
      try {
        readFileSync(join(app, "node_modules", name, "package.json"));
        return true;
      } catch {
        return false;
      }
    };
    assert.equal(modules("vite"), false, "vite is a dev dependency");
    assert.equal(modules("graphiql"), false, "graphiql is bundled at build time, not loaded at run time");
    assert.equal(modules("@apollo/server"), true);
    assert.equal(modules("preact"), false, "preact is bundled at build time, not loaded at run time");
    assert.match(readFileSync(join(app, "dist", "web", "explorer", "index.html"), "utf8"), /\/assets\/explorer-[\w-]+\.js/);
    assert.match(readFileSync(join(app, "dist", "web", "ui", "index.html"), "utf8"), /\/assets\/ui-[\w-]+\.js/);
  });

  test("without a kubeconfig or in-cluster credentials it exits 2 saying how to point it at a cluster, never serving the simulator", async () => {
    const { code, stdout, stderr } = await finished(serve({ AUTH_TOKENS_FILE: join(shared, "tokens.json") }), 60_000);
    assert.equal(code, 2);
    assert.doesNotMatch(stdout, /SIMULATED/);
    const lines = stderr.trim().split("\n");
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, /^node-inventory: no cluster to watch: .*KUBECONFIG.*--simulate N/);
  });

  test("with a kubeconfig and a tokens file: ready, answers a bearer's query, serves the explorer and its assets, exits 0 on SIGTERM", async () => {
    const child = serve({ KUBECONFIG: join(shared, "kubeconfig"), AUTH_TOKENS_FILE: join(shared, "tokens.json") });
    const done = finished(child, 240_000);
    try {
      const url = (await readyUrl(child)).replace("0.0.0.0", "127.0.0.1");
      const answer = await fetch(`${url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ query: "{ clusters { name simulated } nodes { totalCount } }" }),
      });
      assert.deepEqual(await answer.json(), { data: { clusters: [{ name: "sim", simulated: false }], nodes: { totalCount: 4 } } });
      const page = await fetch(`${url}/graphql`, { headers: { accept: "text/html" } });
      assert.equal(page.status, 200);
      const html = await page.text();
      const script = /src="(\/assets\/explorer-[\w-]+\.js)"/.exec(html)![1]!;
      const asset = await fetch(`${url}${script}`);
      assert.equal(asset.status, 200);
      assert.equal(asset.headers.get("content-type"), "text/javascript; charset=utf-8");
      assert.match(html, /"authRequired":true/);
    } finally {
      child.kill("SIGTERM");
    }
    assert.equal((await done).code, 0);
  });
});
