/**
 * The manifests as a user gets them: `kubectl kustomize` (the real kubectl, kustomize built in)
 * of deploy/kubernetes, parsed into objects. KUBECTL may name another kubectl.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { PACKAGE_ROOT } from "../../src/package-info.js";

export const KUBECTL = process.env["KUBECTL"] ?? "kubectl";
export const MANIFESTS = join(PACKAGE_ROOT, "deploy", "kubernetes");

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: any;
}

/** kubectl kustomize DIR, as YAML text. */
export function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(KUBECTL, ["kustomize", dir], { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === "ENOENT") return reject(new Error("kubectl is not on PATH: install it (Debian: kubernetes-client)"));
      if (error) return reject(new Error(`kubectl kustomize ${dir} failed: ${stderr || error.message}`));
      resolve(stdout);
    });
  });
}

/** Every object of a rendered overlay (`single`, `ha`), in kustomize's order. */
export async function renderOverlay(overlay: string): Promise<KubeObject[]> {
  return parseObjects(await kustomize(join(MANIFESTS, "overlays", overlay)));
}

/** An overlay with components added, as a user's own kustomization would combine them (kustomize wants relative paths). */
export async function renderWithComponents(overlay: string, components: string[]): Promise<KubeObject[]> {
  const dir = await mkdtemp(join(tmpdir(), "ni-kustomize-"));
  try {
    const kustomization = [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      `  - ${relative(dir, join(MANIFESTS, "overlays", overlay))}`,
      "components:",
      ...components.map((c) => `  - ${relative(dir, join(MANIFESTS, "components", c))}`),
    ].join("\n");
    await writeFile(join(dir, "kustomization.yaml"), kustomization + "\n");
    return parseObjects(await kustomize(dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function parseObjects(text: string): KubeObject[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
    return doc.toJS() as KubeObject;
  });
}

export function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")}`);
  return found;
}
