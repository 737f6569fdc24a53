import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { QuantityParseError, bytes, cpuMillicores, formatBytes, formatMillicores, parseQuantity } from "../../src/k8s/quantity.js";

const INT64_MAX = (1n << 63n) - 1n;

describe("parseQuantity reads values as apimachinery does", () => {
  // [text, milliValue(), value(), toNumber()]
  const cases: [string, number, number, number][] = [
    ["0", 0, 0, 0],
    ["100m", 100, 1, 0.1],
    ["1", 1000, 1, 1],
    ["0.1", 100, 1, 0.1],
    ["0.5", 500, 1, 0.5],
    [".5", 500, 1, 0.5],
    ["1.", 1000, 1, 1],
    ["1.5", 1500, 2, 1.5],
    ["+1", 1000, 1, 1],
    ["-1.5", -1500, -2, -1.5],
    ["-100m", -100, -1, -0.1],
    ["1.0001m", 2, 1, 0.0010001],
    ["100u", 1, 1, 0.0001],
    ["1n", 1, 1, 1e-9],
    ["3800m", 3800, 4, 3.8],
    ["1k", 1_000_000, 1000, 1000],
    ["1Gi", 1073741824000, 1073741824, 1073741824],
    ["1G", 1e12, 1e9, 1e9],
    ["1.G", 1e12, 1e9, 1e9],
    ["1e3", 1e6, 1000, 1000],
    ["1E3", 1e6, 1000, 1000],
    ["1e+3", 1e6, 1000, 1000],
    ["1E-3", 1, 1, 0.001],
    ["1E", 1e21, 1e18, 1e18],
    ["128974848", 128974848000, 128974848, 128974848],
    ["129e6", 129e9, 129e6, 129e6],
    ["129M", 129e9, 129e6, 129e6],
    ["123Mi", 128974848000, 128974848, 128974848],
    ["5Ki", 5120000, 5120, 5120],
    ["1.5Gi", 1610612736000, 1610612736, 1610612736],
    ["007", 7000, 7, 7],
  ];
  for (const [text, milli, value, num] of cases) {
    test(`${JSON.stringify(text)} is ${milli} milli, ${value} rounded up, ${num} exactly`, () => {
      const q = parseQuantity(text);
      assert.equal(q.text, text);
      assert.equal(q.milliValue(), milli);
      assert.equal(q.value(), value);
      assert.equal(q.toNumber(), num);
    });
  }

  test('"2Ei" is 2^61 exactly, beyond 2^53 but a power of two', () => {
    const q = parseQuantity("2Ei");
    assert.equal(q.nanos, 2n ** 61n * 1_000_000_000n);
    assert.equal(q.value(), 2 ** 61);
    assert.ok(q.value() > Number.MAX_SAFE_INTEGER);
    assert.equal(q.milliValue(), 2 ** 61 * 1000);
  });

  test("finer than a nano rounds up to one nano", () => {
    assert.equal(parseQuantity("0.0000000001").nanos, 1n);
    assert.equal(parseQuantity("-1e-12").nanos, -1n);
    assert.equal(parseQuantity("0e-20").nanos, 0n);
  });

  // Go caps only values that leave its int64 fast path, and never DecimalExponent ones.
  test("arbitrary-precision SI values are capped at 2^63-1 like Go", () => {
    assert.equal(parseQuantity("16Ei").nanos, INT64_MAX * 1_000_000_000n);
    assert.equal(parseQuantity("10000000000000000000").nanos, INT64_MAX * 1_000_000_000n);
    assert.equal(parseQuantity("12E").nanos, 12n * 10n ** 27n);
    assert.equal(parseQuantity("1e19").nanos, 10n ** 28n);
  });

  test("many decimal places stay exact (no float drift)", () => {
    assert.equal(parseQuantity("0.3").nanos - parseQuantity("0.1").nanos * 3n, 0n);
    assert.equal(parseQuantity("1.123456789").nanos, 1_123_456_789n);
  });
});

describe("parseQuantity rejects malformed quantities", () => {
  const cases: [string, RegExp][] = [
    ["", /empty string/],
    ["1.2.3", /unexpected character "\." at position 3/],
    ["Gi", /expected a number/],
    ["-", /expected a number/],
    [".", /expected a number/],
    ["1 Gi", /unexpected character " " at position 1/],
    [" 1", /unexpected character " " at position 0/],
    ["1gi", /unknown suffix "gi"/],
    ["1K", /unknown suffix "K"/],
    ["1ki", /unknown suffix "ki"/],
    ["--1", /expected a number/],
    ["1e", /unknown suffix "e"/],
    ["1e+", /unknown suffix "e\+"/],
    ["1Mm", /unknown suffix "Mm"/],
    ["1Ki3", /unknown suffix "Ki3"/],
    ["1e3.5", /unexpected character "\."/],
    ["1e99999", /exponent 99999 is out of the supported range/],
  ];
  for (const [text, reason] of cases) {
    test(`${JSON.stringify(text)} is refused`, () => {
      assert.throws(
        () => parseQuantity(text),
        (err: unknown) => {
          assert.ok(err instanceof QuantityParseError);
          assert.equal(err.input, text);
          assert.ok(err.message.startsWith(`invalid quantity ${JSON.stringify(text)}: `), err.message);
          assert.match(err.message, reason);
          return true;
        },
      );
    });
  }
});

describe("cpuMillicores and bytes", () => {
  const cpu: [string, number][] = [
    ["100m", 100],
    ["1", 1000],
    ["0.1", 100],
    ["2.5", 2500],
    ["250m", 250],
  ];
  for (const [text, m] of cpu) test(`cpu ${text} is ${m}m`, () => assert.equal(cpuMillicores(text), m));
  const mem: [string, number][] = [
    ["1Gi", 1073741824],
    ["1G", 1e9],
    ["129M", 129e6],
    ["100m", 1],
    ["64Mi", 67108864],
  ];
  for (const [text, b] of mem) test(`memory ${text} is ${b} bytes`, () => assert.equal(bytes(text), b));
});

describe("formatMillicores writes canonical CPU quantities", () => {
  const cases: [number, string][] = [
    [3800, "3800m"],
    [4000, "4"],
    [0, "0"],
    [1, "1m"],
    [250, "250m"],
    [16000, "16"],
    [-500, "-500m"],
  ];
  for (const [m, text] of cases) {
    test(`${m} millicores is ${text}`, () => {
      assert.equal(formatMillicores(m), text);
      assert.equal(cpuMillicores(text), m);
    });
  }
  test("a fractional millicore is refused", () => assert.throws(() => formatMillicores(1.5), RangeError));
});

describe("formatBytes uses the largest exact binary suffix", () => {
  const cases: [number, string][] = [
    [16 * 2 ** 30, "16Gi"],
    [512 * 2 ** 20, "512Mi"],
    [1536 * 2 ** 20, "1536Mi"],
    [1024, "1Ki"],
    [1000, "1000"],
    [129e6, "129000000"],
    [0, "0"],
    [2 ** 61, "2Ei"],
    [-(2 ** 30), "-1Gi"],
  ];
  for (const [b, text] of cases) {
    test(`${b} bytes is ${text}`, () => {
      assert.equal(formatBytes(b), text);
      assert.equal(bytes(text), b);
    });
  }
  test("past 2^63 it still formats, though the apiserver would cap the value it parses", () => {
    assert.equal(formatBytes(2 ** 70), "1024Ei");
    assert.equal(parseQuantity("1024Ei").nanos, INT64_MAX * 1_000_000_000n);
  });
  test("a fractional byte count is refused", () => assert.throws(() => formatBytes(0.5), RangeError));
});
