/**
 * A self-signed certificate for the simulator's optional HTTPS, made with
 * node:crypto and a minimal DER encoder (no openssl binary, no dependency).
 * The certificate is its own CA, with the host as IP or DNS subjectAltName,
 * so kubectl verifies it through certificate-authority-data.
 */
import { generateKeyPairSync, sign, randomBytes } from "node:crypto";
import { isIP } from "node:net";

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  while (n > 0) {
    bytes.unshift(n & 0xff);
    n >>= 8;
  }
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
}

const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);

function oid(text: string): Buffer {
  const parts = text.split(".").map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const stack = [p & 0x7f];
    let v = p >> 7;
    while (v > 0) {
      stack.unshift((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out.push(...stack);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(d: Date): Buffer {
  const s = d.toISOString().replace(/[-:T]/g, "").slice(2, 14) + "Z";
  return tlv(0x17, Buffer.from(s, "ascii"));
}

function name(cn: string): Buffer {
  return seq(set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(cn, "utf8")))));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split(".").map(Number));
  const [head, tail] = ip.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail ? tail.split(":") : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  const buf = Buffer.alloc(16);
  groups.forEach((g, i) => buf.writeUInt16BE(parseInt(g || "0", 16), i * 2));
  return buf;
}

/** Bit numbers of the KeyUsage BIT STRING (RFC 5280, 4.2.1.3): bit 0 is the first byte's high bit. */
export const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5 } as const;

/**
 * The DER BIT STRING of a KeyUsage: the bits, then the leading count of unused
 * bits, which DER requires to be exactly the trailing zero bits of the last
 * byte. digitalSignature, keyEncipherment and keyCertSign are 0xa4 with 2
 * unused bits; Go's x509 refuses any other count ("invalid key usage"),
 * OpenSSL (and so Node) did not mind the 5 this once said.
 */
export function keyUsage(...bits: number[]): Buffer {
  const bytes = Buffer.alloc(Math.floor(Math.max(...bits) / 8) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  const last = bytes[bytes.length - 1]!;
  let unused = 0;
  while (unused < 7 && !(last & (1 << unused))) unused++;
  return tlv(0x03, Buffer.from([unused]), bytes);
}

/** PEM key and certificate for `host` (plus localhost and 127.0.0.1), valid for a year. */
export function selfSignedCertificate(host: string): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const spki = publicKey.export({ type: "spki", format: "der" });
  const sha256Rsa = seq(oid("1.2.840.113549.1.1.11"), Buffer.from([0x05, 0x00]));
  const sans: Buffer[] = [];
  for (const h of new Set([host, "127.0.0.1", "localhost"])) {
    sans.push(isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, "ascii")));
  }
  const extensions = tlv(
    0xa3,
    seq(
      seq(oid("2.5.29.17"), tlv(0x04, seq(...sans))),
      seq(oid("2.5.29.19"), tlv(0x01, Buffer.from([0xff])), tlv(0x04, seq(tlv(0x01, Buffer.from([0xff]))))),
      seq(oid("2.5.29.15"), tlv(0x01, Buffer.from([0xff])), tlv(0x04, keyUsage(KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment, KEY_USAGE.keyCertSign))),
    ),
  );
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const now = Date.now();
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    sha256Rsa,
    name("node-inventory-sim"),
    seq(time(new Date(now - 3_600_000)), time(new Date(now + 365 * 86_400_000))),
    name("node-inventory-sim"),
    spki,
    extensions,
  );
  const signature = sign("sha256", tbs, privateKey);
  const der = seq(tbs, sha256Rsa, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = der
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .trim();
  return {
    key: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    cert: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
  };
}
