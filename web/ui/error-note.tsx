import type { ApiError } from "./api";

/** An error as the service gave it, its code first, announced to screen readers. */
export function ErrorNote({ error }: { error: ApiError | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.code ? `${error.code}: ` : ""}
      {error.message}
    </p>
  );
}
