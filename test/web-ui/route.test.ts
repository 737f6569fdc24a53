import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { importWebModule } from "../support/web-module.js";

describe("web UI routes", () => {
  let parseRoute: (pathname: string) => unknown;
  before(async () => ({ parseRoute } = await importWebModule("route.ts")));

  const cases: [string, unknown][] = [
    ["/ui/", { page: "fleet" }],
    ["/ui", { page: "fleet" }],
    ["/ui/reports", { page: "reports" }],
    ["/ui/nodes/sim/node-1", { page: "node", cluster: "sim", name: "node-1" }],
    ["/ui/nodes/prod%2Feu/ip-10-0-0-1.ec2.internal", { page: "node", cluster: "prod/eu", name: "ip-10-0-0-1.ec2.internal" }],
    ["/ui/nodes/sim", { page: "missing" }],
    ["/ui/nodes/sim/node-1/extra", { page: "missing" }],
    ["/ui/reports/", { page: "missing" }],
    ["/graphql", { page: "missing" }],
  ];
  for (const [path, route] of cases) {
    test(`${path} shows ${JSON.stringify(route)}`, () => assert.deepEqual(parseRoute(path), route));
  }
});
