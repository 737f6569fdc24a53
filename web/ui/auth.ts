// The caller's bearer token, kept for this browser tab's session only (sessionStorage: gone
// when the tab closes, never sent anywhere but this origin's /graphql).
const KEY = "node-inventory.token";

export function getToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function setToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}

/** What the service says the caller is (`whoami`). */
export interface Caller {
  subject: string;
  role: "VIEWER" | "OPERATOR" | "ADMIN";
  via: "TOKEN" | "OIDC" | "LOOPBACK";
}

/** Operators and admins may cordon, uncordon and drain; viewers only look. */
export const mayMaintain = (caller: Caller | undefined): boolean => caller?.role === "OPERATOR" || caller?.role === "ADMIN";
