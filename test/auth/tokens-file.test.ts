import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError } from "../../src/config/config.js";
import { parseTokensFile, sha256 } from "../../src/auth/tokens-file.js";
import { sha256Hex, TOKENS } from "./support.js";

const FILE = "/etc/node-inventory/tokens.json";

describe("the tokens file", () => {
  test("both forms: a plain token and the sha256 of one, each with its subject and role", () => {
    const entries = parseTokensFile(
      JSON.stringify([
        { subject: "vera", role: "viewer", token: TOKENS.viewer },
        { subject: "otto", role: "operator", sha256: sha256Hex(TOKENS.operator).toUpperCase() },
      ]),
      FILE,
    );
    assert.deepEqual(entries, [
      { subject: "vera", role: "viewer", digest: sha256(TOKENS.viewer) },
      { subject: "otto", role: "operator", digest: sha256(TOKENS.operator) },
    ]);
  });

  test("an empty list is valid: nobody gets in with a token", () => {
    assert.deepEqual(parseTokensFile("[]", FILE), []);
  });

  const token = TOKENS.admin;
  const bad: [string, unknown, string][] = [
    ["not an array", { subject: "a", role: "admin", token }, `tokens file ${FILE}: must be a JSON array of { "subject", "role", "token" | "sha256" }`],
    ["an entry that is not an object", [{ subject: "a", role: "admin", token }, "x"], `tokens file ${FILE}: entry [1]: must be an object`],
    ["no subject", [{ role: "admin", token }], `tokens file ${FILE}: entry [0]: "subject" must be a non-empty string`],
    ["an unknown role", [{ subject: "a", role: "root", token }], `tokens file ${FILE}: entry [0]: "role" must be one of viewer, operator, admin`],
    ["neither token nor sha256", [{ subject: "a", role: "admin" }], `tokens file ${FILE}: entry [0]: needs exactly one of "token" and "sha256"`],
    ["both token and sha256", [{ subject: "a", role: "admin", token, sha256: sha256Hex(token) }], `tokens file ${FILE}: entry [0]: needs exactly one of "token" and "sha256"`],
    ["a short token", [{ subject: "a", role: "admin", token: "short-secret" }], `tokens file ${FILE}: entry [0]: "token" must be a string of at least 16 characters without spaces`],
    ["a sha256 that is not 64 hex digits", [{ subject: "a", role: "admin", sha256: "abc123-not-a-digest" }], `tokens file ${FILE}: entry [0]: "sha256" must be 64 hexadecimal digits`],
    ["a misspelt key", [{ subject: "a", role: "admin", sha265: sha256Hex(token) }], `tokens file ${FILE}: entry [0]: unknown key "sha265" (expected subject, role, and token or sha256)`],
    [
      "the same token twice, in both forms",
      [
        { subject: "a", role: "admin", token },
        { subject: "b", role: "viewer", sha256: sha256Hex(token) },
      ],
      `tokens file ${FILE}: entry [1]: has the same token as entry [0]`,
    ],
  ];
  for (const [what, content, message] of bad) {
    test(`${what}: one line naming the file and the entry, without the secret`, () => {
      assert.throws(
        () => parseTokensFile(JSON.stringify(content), FILE),
        (error: Error) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.message, message);
          assert.doesNotMatch(error.message, new RegExp(`${token}|${sha256Hex(token)}|short-secret|abc123`));
          return true;
        },
      );
    });
  }

  test("broken JSON is reported without quoting the text (it holds tokens)", () => {
    assert.throws(
      () => parseTokensFile(`[\n  {"subject": "a", "role": "admin", "token": "${token}"\n`, FILE),
      (error: Error) => {
        assert.match(error.message, new RegExp(`^tokens file ${FILE}: not valid JSON`));
        assert.doesNotMatch(error.message, new RegExp(token));
        return true;
      },
    );
  });
});
