/** What the pages for people tell them about this service, beyond what GraphQL answers. */
export interface PageSettings {
  version: string;
  /** Clusters that are the embedded simulator: the pages say so, so a demo is never taken for production. */
  simulatedClusters: string[];
  /** True when callers must send a bearer token (a tokens file or OIDC is configured). */
  authRequired: boolean;
  introspection: boolean;
}

/** `<` and friends escaped, for text put into HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
