// Which page a /ui/ address shows: pure, so the unit tests read it without a browser.

export type Route = { page: "fleet" } | { page: "node"; cluster: string; name: string } | { page: "reports" } | { page: "missing" };

export function parseRoute(pathname: string): Route {
  if (pathname === "/ui/" || pathname === "/ui") return { page: "fleet" };
  if (pathname === "/ui/reports") return { page: "reports" };
  const node = /^\/ui\/nodes\/([^/]+)\/([^/]+)$/.exec(pathname);
  if (node) return { page: "node", cluster: decodeURIComponent(node[1]!), name: decodeURIComponent(node[2]!) };
  return { page: "missing" };
}
