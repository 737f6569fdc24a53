// The API explorer: GraphiQL on this service's own /graphql, over HTTP for queries and
// mutations and over graphql-ws for subscriptions. The service writes its settings (is
// authentication on, which clusters are simulated) into the page as JSON.
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import { GraphiQL } from "graphiql";
import { parse } from "graphql";
import "graphiql/setup-workers/vite";
import "graphiql/style.css";
import { createElement as h, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import "./explorer.css";

const settings = JSON.parse(document.getElementById("node-inventory-settings")?.textContent ?? "{}");
const TOKEN_KEY = "node-inventory.token";
const DEFAULT_QUERY = `# Every node in every cluster, from the live watch cache.
{
  clusters { name simulated synced nodeCount readyNodeCount }
  nodes(first: 10) {
    totalCount
    edges { node { cluster name status roles zone instanceType } }
  }
}
`;

function fetcherFor(token) {
  const origin = window.location.origin;
  const authorization = token ? `Bearer ${token}` : undefined;
  const fetcher = createGraphiQLFetcher({
    url: `${origin}/graphql`,
    subscriptionUrl: `${origin.replace(/^http/, "ws")}/graphql`,
    headers: authorization ? { authorization } : {},
    // graphql-ws carries credentials in connection_init, not in headers.
    wsConnectionParams: authorization ? { authorization } : {},
  });
  // The toolkit picks graphql-ws when GraphiQL's parsed document is a subscription, but that
  // document is parsed from the editor after a pause: run at once after typing (or pasting) a
  // subscription, the query sent was the new text and the document the old one, so the
  // subscription went over HTTP (seen in the browser test). Decide from the text sent.
  return (params, options) => {
    let documentAST = options?.documentAST;
    try {
      documentAST = parse(params.query);
    } catch {
      // Not a valid document: the service will say why.
    }
    return fetcher(params, { ...options, documentAST });
  };
}

function Banner({ token, setToken }) {
  const simulated = settings.simulatedClusters ?? [];
  return h(
    "header",
    { className: "ni-banner" },
    h("a", { href: "/", className: "ni-home" }, "node-inventory"),
    simulated.length
      ? h("span", { className: "ni-simulated", role: "status" }, `Simulated cluster: ${simulated.join(", ")} (not a real cluster)`)
      : null,
    settings.authRequired
      ? h(
          "label",
          { className: "ni-token" },
          "Bearer token ",
          h("input", {
            type: "password",
            autoComplete: "off",
            placeholder: "token for Authorization: Bearer …",
            value: token,
            onChange: (event) => {
              sessionStorage.setItem(TOKEN_KEY, event.target.value);
              setToken(event.target.value);
            },
          }),
        )
      : h("span", { className: "ni-local" }, "No authentication configured: you are the local admin"),
  );
}

function Explorer() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY) ?? "");
  const fetcher = useMemo(() => fetcherFor(token), [token]);
  return h(
    "div",
    { className: "ni-page" },
    h(Banner, { token, setToken }),
    h("main", { className: "ni-graphiql" }, h(GraphiQL, { fetcher, defaultQuery: DEFAULT_QUERY, shouldPersistHeaders: false })),
  );
}

createRoot(document.getElementById("explorer")).render(h(Explorer));
