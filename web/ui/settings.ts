/** What the service wrote into the page (src/http/page-settings.ts). */
export interface PageSettings {
  version: string;
  simulatedClusters: string[];
  authRequired: boolean;
  introspection: boolean;
}

export const settings: PageSettings = {
  version: "",
  simulatedClusters: [],
  authRequired: false,
  introspection: true,
  ...JSON.parse(document.getElementById("node-inventory-settings")?.textContent ?? "{}"),
};
