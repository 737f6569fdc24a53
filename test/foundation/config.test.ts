import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, loadConfig, redactDatabaseUrl } from "../../src/config/config.js";

describe("configuration", () => {
  test("with nothing set, it listens on 127.0.0.1:4000 with PGlite in ./data", () => {
    assert.deepEqual(loadConfig([], {}), {
      host: "127.0.0.1",
      port: 4000,
      logLevel: "info",
      database: { kind: "pglite", dataDir: "./data" },
      clusters: { kubeconfigs: [], contexts: [] },
      history: { retentionDays: 90, leaseNamespace: "kube-system", leaseDurationSeconds: 15 },
      auth: { impersonate: false, mutationRateLimit: 30 },
      limits: {
        maxQueryDepth: 12,
        maxQueryCost: 500_000,
        maxWebSocketsPerCaller: 100,
        maxSubscriptionsPerConnection: 100,
        maxSubscriptionsPerCaller: 1_000,
        maxInFlightPerCaller: 16,
        maxInFlight: 128,
        maxSubscriptionEventCost: 10_000,
        maxConnections: 10_000,
        maxConnectionsPerAddress: 1_000,
      },
      maintenance: { drainTimeoutSeconds: 600 },
      trends: { intervalSeconds: 60, rawRetentionHours: 48, labelKeys: ["kubernetes.io/arch", "node.kubernetes.io/capacity-type", "karpenter.sh/capacity-type"] },
    });
  });

  test("the default drain timeout comes from --drain-timeout or DRAIN_TIMEOUT_SECONDS, 1 to 86400", () => {
    assert.equal(loadConfig(["--drain-timeout", "1800"], {}).maintenance.drainTimeoutSeconds, 1800);
    assert.equal(loadConfig([], { DRAIN_TIMEOUT_SECONDS: "90" }).maintenance.drainTimeoutSeconds, 90);
    assert.throws(() => loadConfig([], { DRAIN_TIMEOUT_SECONDS: "0" }), ConfigError);
    assert.throws(() => loadConfig(["--drain-timeout", "forever"], {}), ConfigError);
  });

  test("flags win over environment variables", () => {
    const config = loadConfig(["--port", "5000", "--host=0.0.0.0"], { PORT: "6000", HOST: "10.0.0.1", LOG_LEVEL: "debug" });
    assert.equal(config.port, 5000);
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.logLevel, "debug");
  });

  test("a postgresql:// URL selects PostgreSQL, `memory` keeps PGlite in memory", () => {
    assert.deepEqual(loadConfig([], { DATABASE_URL: "postgresql://u:p@db:5432/inv" }).database, {
      kind: "postgres",
      url: "postgresql://u:p@db:5432/inv",
    });
    assert.deepEqual(loadConfig(["--data-dir", "memory"], {}).database, { kind: "pglite", dataDir: "memory" });
  });

  const invalid: [string, string[], Record<string, string>, RegExp][] = [
    ["a port that is not a number", ["--port", "abc"], {}, /^--port: "abc" is not a port number/],
    ["a port out of range", [], { PORT: "70000" }, /^PORT: "70000" is not a port number/],
    ["an unknown log level", ["--log-level", "loud"], {}, /^--log-level: "loud" is not one of fatal, error/],
    ["a database URL of another scheme", [], { DATABASE_URL: "mysql://x@y/z" }, /^DATABASE_URL: scheme "mysql" is not supported/],
    ["an unknown flag", ["--nope"], {}, /Unknown option '--nope'/],
    ["a flag without its value", ["--port"], {}, /Option '--port <value>' argument missing/],
    ["a simulated cluster of no nodes", ["--simulate", "0"], {}, /^--simulate: "0" is not a node count/],
    ["a retention of zero days", [], { HISTORY_RETENTION_DAYS: "0" }, /^HISTORY_RETENTION_DAYS: "0" is not a whole number from 1/],
    ["a lease namespace that is not a name", ["--lease-namespace", "Kube_System"], {}, /^--lease-namespace: "Kube_System" is not a namespace name/],
    ["a trends interval that is not a number of seconds", [], { TRENDS_INTERVAL_SECONDS: "1m" }, /^TRENDS_INTERVAL_SECONDS: "1m" is not a whole number from 0 to 86400/],
    ["a trends label key that is no label key", ["--trends-label-keys", "team,bad key"], {}, /^--trends-label-keys: "bad key" is not a label key: /],
    ["more trends label keys than cells should be split by", [], { TRENDS_LABEL_KEYS: "a,b,c,d,e,f,g,h,i" }, /^TRENDS_LABEL_KEYS: 9 keys; at most 8$/],
    ["a raw trends retention of zero hours", ["--trends-raw-retention-hours", "0"], {}, /^--trends-raw-retention-hours: "0" is not a whole number from 1/],
  ];
  for (const [what, argv, env, message] of invalid) {
    test(`${what} is a ConfigError naming the setting`, () => {
      assert.throws(() => loadConfig(argv, env), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /\n/);
        return true;
      });
    });
  }

  test("a malformed database URL is refused without echoing it (it may hold a password)", () => {
    assert.throws(() => loadConfig([], { DATABASE_URL: "postgresql://u:s3cret@[bad" }), (error: Error) => {
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
  });

  test("kubeconfig lists and repeated --context flags", () => {
    assert.deepEqual(loadConfig(["--context", "a", "--context", "b"], { KUBECONFIG: "/x:/y" }).clusters, {
      kubeconfigs: ["/x", "/y"],
      contexts: ["a", "b"],
    });
    assert.deepEqual(loadConfig([], { KUBE_CONTEXTS: "a, b", SIMULATE: "40" }).clusters, { kubeconfigs: [], contexts: ["a", "b"], simulate: 40 });
  });

  test("trends sampling can be turned off, and raw samples kept longer", () => {
    assert.deepEqual(loadConfig(["--trends-interval", "0"], { TRENDS_RAW_RETENTION_HOURS: "168", TRENDS_LABEL_KEYS: "" }).trends, { intervalSeconds: 0, rawRetentionHours: 168, labelKeys: [] });
  });

  test("trends label keys: a comma-separated list, the flag over the variable, an empty flag for none", () => {
    assert.deepEqual(loadConfig([], { TRENDS_LABEL_KEYS: " team, example.com/tier ,team" }).trends.labelKeys, ["team", "example.com/tier"]);
    assert.deepEqual(loadConfig(["--trends-label-keys", "env"], { TRENDS_LABEL_KEYS: "team" }).trends.labelKeys, ["env"]);
    assert.deepEqual(loadConfig(["--trends-label-keys", ""], {}).trends.labelKeys, []);
  });

  test("redactDatabaseUrl drops the password", () => {
    assert.equal(redactDatabaseUrl("postgresql://app:s3cret@db:5432/inv"), "postgresql://app@db:5432/inv");
  });
});

describe("first-contact settings", () => {
  test("introspection is on unless --introspection or INTROSPECTION says false", () => {
    assert.equal(loadConfig([], {}).introspection, undefined);
    assert.equal(loadConfig(["--introspection", "false"], {}).introspection, false);
    assert.equal(loadConfig([], { INTROSPECTION: "false" }).introspection, false);
    assert.equal(loadConfig(["--introspection", "true"], { INTROSPECTION: "false" }).introspection, undefined);
    assert.throws(() => loadConfig([], { INTROSPECTION: "maybe" }), /^ConfigError: INTROSPECTION: "maybe" is not true or false$/);
  });

  test("--log-format / LOG_FORMAT is json or pretty; unset leaves it to the terminal", () => {
    assert.equal(loadConfig([], {}).logFormat, undefined);
    assert.equal(loadConfig(["--log-format", "pretty"], {}).logFormat, "pretty");
    assert.equal(loadConfig([], { LOG_FORMAT: "json" }).logFormat, "json");
    assert.throws(() => loadConfig([], { LOG_FORMAT: "xml" }), /^ConfigError: LOG_FORMAT: "xml" is not one of json, pretty$/);
  });

  test("SIMULATOR_FALLBACK=false is kept in the cluster settings; true is the default", () => {
    assert.deepEqual(loadConfig([], { SIMULATOR_FALLBACK: "false" }).clusters, { kubeconfigs: [], contexts: [], simulatorFallback: false });
    assert.deepEqual(loadConfig(["--simulator-fallback", "true"], {}).clusters, { kubeconfigs: [], contexts: [] });
  });
});
