import { AppError, ErrorCode } from "../graphql/errors.js";
import { isAlreadyExists, isConflict, isForbidden, isInvalid, isNotFound, isUnauthorized, kubeErrorDetail } from "./kube-client.js";

/** A Kubernetes call on behalf of a caller: its refusals become contract errors. */
export async function kube<T>(cluster: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const detail = kubeErrorDetail(error);
    if (isUnauthorized(error) || isForbidden(error)) throw new AppError(ErrorCode.FORBIDDEN, `cluster "${cluster}" refused: ${detail}`);
    if (isNotFound(error)) throw new AppError(ErrorCode.NOT_FOUND, `cluster "${cluster}": ${detail}`);
    if (isConflict(error) || isAlreadyExists(error)) throw new AppError(ErrorCode.CONFLICT, `cluster "${cluster}": ${detail}`);
    if (isInvalid(error)) throw new AppError(ErrorCode.BAD_USER_INPUT, `cluster "${cluster}": ${detail}`);
    throw new AppError(ErrorCode.UNAVAILABLE, `cluster "${cluster}" cannot be reached: ${detail}`);
  }
}
