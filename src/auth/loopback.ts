import { isIPv4 } from "node:net";

/**
 * True for `localhost`, 127.0.0.0/8 and ::1 (bracketed or IPv4-mapped too): a host name or
 * peer address only this machine can reach.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice(7) : bare;
  return isIPv4(v4) && v4.startsWith("127.");
}

/** The host part of a Host header or an origin's authority: `[::1]:4000` → `[::1]`. */
export function hostOfAuthority(authority: string): string {
  return authority.startsWith("[") ? authority.slice(0, authority.indexOf("]") + 1) : authority.replace(/:\d*$/, "");
}
