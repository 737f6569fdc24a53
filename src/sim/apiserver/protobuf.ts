/**
 * Request bodies in Kubernetes' protobuf encoding, which kubectl's typed
 * clients send for `kubectl create secret|configmap|service|role|rolebinding|
 * clusterrole|clusterrolebinding|poddisruptionbudget`: the `k8s\0` envelope
 * (runtime.Unknown: its TypeMeta and the object's bytes), then the object
 * decoded by a table of the messages those kinds use (field numbers of the
 * k8s.io/api generated.proto files), into the JSON the handlers read.
 *
 * Only those kinds are known; anything else is 415, as a body the server
 * cannot read. Responses stay JSON (clients accept it and decode by its type).
 */
import { ApiError, unsupportedMediaType } from "./status.js";

export const PROTOBUF = "application/vnd.kubernetes.protobuf";
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Obj = Record<string, any>;
type Scalar = "string" | "bytes" | "int" | "bool" | "time" | "intOrString";
type FieldType = Scalar | Message;
/** Field number -> [JSON name, type, repeated?]; maps are `{ map: [valueType] }` (keys are strings). */
interface Message {
  [field: number]: [string, FieldType | { map: FieldType }, boolean?];
}

const TIME: Message = { 1: ["seconds", "int"], 2: ["nanos", "int"] };
const INT_OR_STRING: Message = { 1: ["type", "int"], 2: ["intVal", "int"], 3: ["strVal", "string"] };
const OWNER_REFERENCE: Message = { 1: ["kind", "string"], 3: ["name", "string"], 4: ["uid", "string"], 5: ["apiVersion", "string"], 6: ["controller", "bool"], 7: ["blockOwnerDeletion", "bool"] };
const OBJECT_META: Message = {
  1: ["name", "string"],
  2: ["generateName", "string"],
  3: ["namespace", "string"],
  5: ["uid", "string"],
  6: ["resourceVersion", "string"],
  7: ["generation", "int"],
  8: ["creationTimestamp", "time"],
  11: ["labels", { map: "string" }],
  12: ["annotations", { map: "string" }],
  13: ["ownerReferences", OWNER_REFERENCE, true],
  14: ["finalizers", "string", true],
};
const LABEL_SELECTOR: Message = { 1: ["matchLabels", { map: "string" }], 2: ["matchExpressions", { 1: ["key", "string"], 2: ["operator", "string"], 3: ["values", "string", true] }, true] };
const POLICY_RULE: Message = {
  1: ["verbs", "string", true],
  2: ["apiGroups", "string", true],
  3: ["resources", "string", true],
  4: ["resourceNames", "string", true],
  5: ["nonResourceURLs", "string", true],
};
const SUBJECT: Message = { 1: ["kind", "string"], 2: ["apiGroup", "string"], 3: ["name", "string"], 4: ["namespace", "string"] };
const ROLE_REF: Message = { 1: ["apiGroup", "string"], 2: ["kind", "string"], 3: ["name", "string"] };
const SERVICE_PORT: Message = { 1: ["name", "string"], 2: ["protocol", "string"], 3: ["port", "int"], 4: ["targetPort", "intOrString"], 5: ["nodePort", "int"], 6: ["appProtocol", "string"] };
const SERVICE_SPEC: Message = {
  1: ["ports", SERVICE_PORT, true],
  2: ["selector", { map: "string" }],
  3: ["clusterIP", "string"],
  4: ["type", "string"],
  5: ["externalIPs", "string", true],
  7: ["sessionAffinity", "string"],
  10: ["externalName", "string"],
  11: ["externalTrafficPolicy", "string"],
  13: ["publishNotReadyAddresses", "bool"],
  17: ["ipFamilyPolicy", "string"],
  18: ["clusterIPs", "string", true],
  19: ["ipFamilies", "string", true],
  22: ["internalTrafficPolicy", "string"],
};

/** The top-level messages by "apiVersion/kind". */
const KINDS: Record<string, Message> = {
  "v1/Secret": { 1: ["metadata", OBJECT_META], 2: ["data", { map: "bytes" }], 3: ["type", "string"], 4: ["stringData", { map: "string" }], 5: ["immutable", "bool"] },
  "v1/ConfigMap": { 1: ["metadata", OBJECT_META], 2: ["data", { map: "string" }], 3: ["binaryData", { map: "bytes" }], 4: ["immutable", "bool"] },
  "v1/Service": { 1: ["metadata", OBJECT_META], 2: ["spec", SERVICE_SPEC] },
  "v1/ServiceAccount": { 1: ["metadata", OBJECT_META], 4: ["automountServiceAccountToken", "bool"] },
  "v1/Namespace": { 1: ["metadata", OBJECT_META] },
  "policy/v1/PodDisruptionBudget": {
    1: ["metadata", OBJECT_META],
    2: ["spec", { 1: ["minAvailable", "intOrString"], 2: ["selector", LABEL_SELECTOR], 3: ["maxUnavailable", "intOrString"], 4: ["unhealthyPodEvictionPolicy", "string"] }],
  },
  "rbac.authorization.k8s.io/v1/Role": { 1: ["metadata", OBJECT_META], 2: ["rules", POLICY_RULE, true] },
  "rbac.authorization.k8s.io/v1/ClusterRole": { 1: ["metadata", OBJECT_META], 2: ["rules", POLICY_RULE, true], 3: ["aggregationRule", { 1: ["clusterRoleSelectors", LABEL_SELECTOR, true] }] },
  "rbac.authorization.k8s.io/v1/RoleBinding": { 1: ["metadata", OBJECT_META], 2: ["subjects", SUBJECT, true], 3: ["roleRef", ROLE_REF] },
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": { 1: ["metadata", OBJECT_META], 2: ["subjects", SUBJECT, true], 3: ["roleRef", ROLE_REF] },
};

/** Wire-format fields of one message: [field number, wire type, value]. */
function* fields(buf: Buffer): Generator<[number, number, bigint | Buffer]> {
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error("truncated varint");
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield [no, wire, varint()];
    else if (wire === 2) {
      const n = Number(varint());
      if (i + n > buf.length) throw new Error("truncated field");
      yield [no, wire, buf.subarray(i, i + n)];
      i += n;
    } else if (wire === 1) {
      yield [no, wire, buf.subarray(i, i + 8)];
      i += 8;
    } else if (wire === 5) {
      yield [no, wire, buf.subarray(i, i + 4)];
      i += 4;
    } else throw new Error(`wire type ${wire}`);
  }
}

function scalar(type: Scalar | Message, v: bigint | Buffer): unknown {
  if (typeof type === "object") return message(v as Buffer, type);
  switch (type) {
    case "string":
      return (v as Buffer).toString("utf8");
    case "bytes":
      return (v as Buffer).toString("base64");
    case "int":
      return Number(BigInt.asIntN(64, v as bigint));
    case "bool":
      return v !== 0n;
    case "time": {
      const t = message(v as Buffer, TIME);
      return new Date((t.seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
    }
    case "intOrString": {
      const x = message(v as Buffer, INT_OR_STRING);
      return x.type === 1 ? (x.strVal ?? "") : (x.intVal ?? 0);
    }
  }
}

function message(buf: Buffer, desc: Message): Obj {
  const out: Obj = {};
  for (const [no, , v] of fields(buf)) {
    const f = desc[no];
    if (!f) continue; // a field this table does not know (status, say): left out
    const [name, type, repeated] = f;
    if (typeof type === "object" && "map" in type) {
      const entry = message(v as Buffer, { 1: ["key", "string"], 2: ["value", type.map as FieldType] });
      (out[name] ??= {})[entry.key ?? ""] = entry.value ?? (type.map === "bytes" || type.map === "string" ? "" : undefined);
    } else if (repeated) {
      (out[name] ??= []).push(scalar(type as Scalar | Message, v));
    } else {
      const value = scalar(type as Scalar | Message, v);
      // Go's encoder writes empty strings that JSON would omit (omitempty): leave them out too.
      if (value !== "") out[name] = value;
    }
  }
  return out;
}

/** The JSON of a protobuf request body, or 415 for an envelope or kind it cannot read. */
export function protobufToJson(body: Buffer): Buffer {
  const refuse = () => unsupportedMediaType(["application/json", PROTOBUF]);
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw refuse();
  try {
    const unknown = message(body.subarray(4), { 1: ["typeMeta", { 1: ["apiVersion", "string"], 2: ["kind", "string"] }], 2: ["raw", "bytes"] });
    const { apiVersion, kind } = (unknown.typeMeta ?? {}) as Obj;
    const desc = KINDS[`${apiVersion}/${kind}`];
    if (!desc) throw refuse();
    const obj = { apiVersion, kind, ...message(Buffer.from(unknown.raw ?? "", "base64"), desc) };
    return Buffer.from(JSON.stringify(obj));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw refuse();
  }
}
