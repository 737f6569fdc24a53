/**
 * What a pod needs from the API before it can run, as the scheduler's
 * VolumeBinding plugin and the kubelet's volume manager and container config
 * check it: its PersistentVolumeClaims bound, and the Secrets and ConfigMaps
 * its volumes and environment name present (unless marked optional).
 */
import type { KObject, ObjectStore } from "../store.js";
import { objectKey } from "../store.js";
import { R } from "../storage-names.js";

type Obj = Record<string, any>;

const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";

/** Why the scheduler cannot place the pod for its claims (a PodScheduled message part), or undefined. */
export function claimProblem(pod: KObject, store: ObjectStore): string | undefined {
  const ns = pod.metadata.namespace;
  for (const v of ((pod.spec as Obj).volumes ?? []) as Obj[]) {
    const name = v.persistentVolumeClaim?.claimName as string | undefined;
    if (!name) continue;
    const claim = store.get(R.persistentvolumeclaims, objectKey(ns, name))?.obj;
    if (!claim) return `persistentvolumeclaim ${JSON.stringify(name)} not found`;
    if ((claim.status as Obj | undefined)?.phase !== "Bound") return "pod has unbound immediate PersistentVolumeClaims";
  }
  return undefined;
}

/** The kubelet's first complaint about a volume source that is missing: the FailedMount message, or undefined. */
export function mountProblem(pod: KObject, store: ObjectStore): string | undefined {
  const ns = pod.metadata.namespace;
  // kube-root-ca.crt is in every namespace of a real cluster (the root CA publisher's); the simulator does not store it.
  const missing = (resource: string, name: string) => !(resource === R.configmaps && name === ROOT_CA_CONFIGMAP) && !store.get(resource, objectKey(ns, name));
  for (const v of ((pod.spec as Obj).volumes ?? []) as Obj[]) {
    if (v.secret && !v.secret.optional && missing(R.secrets, v.secret.secretName)) return `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : secret ${JSON.stringify(v.secret.secretName)} not found`;
    if (v.configMap && !v.configMap.optional && missing(R.configmaps, v.configMap.name)) return `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : configmap ${JSON.stringify(v.configMap.name)} not found`;
    for (const s of (v.projected?.sources ?? []) as Obj[]) {
      if (s.secret && !s.secret.optional && missing(R.secrets, s.secret.name)) return `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : secret ${JSON.stringify(s.secret.name)} not found`;
      if (s.configMap && !s.configMap.optional && missing(R.configmaps, s.configMap.name)) return `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : configmap ${JSON.stringify(s.configMap.name)} not found`;
    }
  }
  return undefined;
}

/** A container's environment naming a missing Secret or ConfigMap: the CreateContainerConfigError message, or undefined. */
export function configProblem(pod: KObject, store: ObjectStore): { container: string; message: string } | undefined {
  const ns = pod.metadata.namespace;
  const missing = (resource: string, name: string) => !store.get(resource, objectKey(ns, name));
  for (const c of ((pod.spec as Obj).containers ?? []) as Obj[]) {
    for (const from of (c.envFrom ?? []) as Obj[]) {
      if (from.secretRef && !from.secretRef.optional && missing(R.secrets, from.secretRef.name)) return { container: c.name, message: `secret ${JSON.stringify(from.secretRef.name)} not found` };
      if (from.configMapRef && !from.configMapRef.optional && missing(R.configmaps, from.configMapRef.name)) return { container: c.name, message: `configmap ${JSON.stringify(from.configMapRef.name)} not found` };
    }
    for (const e of (c.env ?? []) as Obj[]) {
      const s = e.valueFrom?.secretKeyRef;
      if (s && !s.optional && missing(R.secrets, s.name)) return { container: c.name, message: `secret ${JSON.stringify(s.name)} not found` };
      const m = e.valueFrom?.configMapKeyRef;
      if (m && !m.optional && missing(R.configmaps, m.name)) return { container: c.name, message: `configmap ${JSON.stringify(m.name)} not found` };
    }
  }
  return undefined;
}
