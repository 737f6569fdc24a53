/**
 * `kind: Status` bodies shaped exactly as kube-apiserver writes them, and the
 * error type every handler throws so one place turns failures into responses.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never> | { resourceVersion?: string };
  status: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An API failure that the router answers with its Status body and code. */
export class ApiError extends Error {
  constructor(public readonly status: Status) {
    super(status.message ?? status.reason ?? "error");
  }
  get code(): number {
    return this.status.code;
  }
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): ApiError {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  if (details) status.details = details;
  return new ApiError(status);
}

/** "nodes" for core, "poddisruptionbudgets.policy" for a group, as in apiserver messages. */
export function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function notFound(resource: string, group: string, name: string): ApiError {
  return failure(404, "NotFound", `${qualified(resource, group)} "${name}" not found`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  });
}

export function alreadyExists(resource: string, group: string, name: string): ApiError {
  return failure(409, "AlreadyExists", `${qualified(resource, group)} "${name}" already exists`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  });
}

export function conflict(resource: string, group: string, name: string): ApiError {
  return failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, ...(group ? { group } : {}), kind: resource },
  );
}

/** A conflict with no object details (the apply conflict's NewApplyConflict). */
export function conflictStatus(message: string, causes: StatusCause[]): ApiError {
  return failure(409, "Conflict", message, { causes });
}

export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  // errs.ToAggregate(): repeated messages once, more than one in brackets.
  const messages = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const summary = messages.length > 1 ? `[${messages.join(", ")}]` : messages.join("");
  // The kind is qualified by its group ("Lease.coordination.k8s.io"), as NewInvalid's GroupKind prints.
  return failure(422, "Invalid", `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${summary}`, {
    name,
    ...(group ? { group } : {}),
    kind,
    causes: causes.map((c) => ({ reason: c.reason ?? "FieldValueInvalid", message: c.message ?? "", field: c.field ?? "" })),
  });
}

export function badRequest(message: string): ApiError {
  return failure(400, "BadRequest", message);
}

export function methodNotAllowed(message = "the server does not allow this method on the requested resource"): ApiError {
  return failure(405, "MethodNotAllowed", message);
}

/** A body of a type the server does not read, as the apiserver's content negotiation answers it. */
export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return failure(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`);
}

/** An Accept the server cannot answer, as its content negotiation words it. */
export function notAcceptable(supported: readonly string[]): ApiError {
  return failure(406, "NotAcceptable", `only the following media types are accepted: ${supported.join(", ")}`);
}

/** A request refused before any resource is looked at (the apiserver's Forbidden has empty details here). */
export function forbidden(message: string): ApiError {
  return failure(403, "Forbidden", message, {});
}

export function requestEntityTooLarge(message: string): ApiError {
  return failure(413, "RequestEntityTooLarge", `Request entity too large: ${message}`);
}

export function pathNotFound(): ApiError {
  return failure(404, "NotFound", "the server could not find the requested resource");
}

export function gone(message: string): ApiError {
  return failure(410, "Expired", message);
}

export function tooManyRequests(message: string, causes: StatusCause[]): ApiError {
  return failure(429, "TooManyRequests", message, { causes });
}

export function timeout(message: string, retryAfterSeconds = 0): ApiError {
  return failure(504, "Timeout", `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : {});
}

/** storage.NewTooLargeResourceVersionError: a read at a resourceVersion the server has not reached. */
export function tooLargeResourceVersion(wanted: number | string, current: number): ApiError {
  const e = timeout(`Too large resource version: ${wanted}, current: ${current}`, 1);
  e.status.details!.causes = [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }];
  return e;
}

export function internalError(message: string): ApiError {
  return failure(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** An error storage returned that the apiserver passes on as it is (ErrorToAPIStatus: 500, reason Unknown). */
export function unconverted(message: string): ApiError {
  return failure(500, "Unknown", message);
}

/** The body a successful non-returning DELETE or an eviction answers with. */
export function success(code: number, details?: StatusDetails): Status {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code };
  if (details) status.details = details;
  return status;
}

/** Normalise anything thrown into an ApiError; never throws. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return internalError(message);
}

// ---------------------------------------------------------------- authentication and authorization

/** A request whose credentials are missing (where they are required) or not valid. */
export function unauthorized(): ApiError {
  return failure(401, "Unauthorized", "Unauthorized");
}

/** What an authorizer was asked, as the Forbidden message names it. */
export interface ForbiddenAttributes {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/**
 * The apiserver's Forbidden for a request the authorizer refused, worded as
 * its responsewriters.Forbidden words it: `nodes is forbidden: User "u" cannot
 * list resource "nodes" in API group "" at the cluster scope`, with the
 * authorizer's reason after a colon when it gave one.
 */
export function forbiddenFor(a: ForbiddenAttributes, username: string, reason: string): ApiError {
  const user = JSON.stringify(username);
  let msg: string;
  if (!a.isResourceRequest) {
    msg = `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  } else {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const where = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : "at the cluster scope";
    msg = `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
  }
  if (reason) msg = `${msg}: ${reason}`;
  if (!a.isResourceRequest || !a.resource) return failure(403, "Forbidden", `forbidden: ${msg}`, {});
  const qualifiedResource = qualified(a.resource, a.apiGroup);
  const message = a.name ? `${qualifiedResource} ${JSON.stringify(a.name)} is forbidden: ${msg}` : `${qualifiedResource} is forbidden: ${msg}`;
  return failure(403, "Forbidden", message, { ...(a.name ? { name: a.name } : {}), ...(a.apiGroup ? { group: a.apiGroup } : {}), kind: a.resource });
}
