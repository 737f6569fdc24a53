import type { Socket } from "node:net";
import type { WebSocket } from "ws";

/**
 * Sends `text` as one unmasked, unfragmented WebSocket text frame (RFC 6455 §5.2), header and
 * payload in one buffer and one write to the connection's TCP socket. ws's own `send` writes
 * the header and the payload as two buffers under cork, so every message costs a `writev`
 * and the stream machinery for two chunks; at thousands of subscribers per event that is a
 * tenth of the service's work for each one (bench/subscriptions.ts).
 *
 * Writing beside ws's Sender is safe only while the Sender writes synchronously and holds
 * nothing back, which it does when no extension is negotiated (no permessage-deflate: our
 * server does not offer it) and nothing is sent as a Blob (we never do). Otherwise, or when
 * the connection is not open, this falls back to `socket.send`. `done` is called once the
 * frame is handed to the kernel (or with the write's error), as `send`'s callback is.
 */
export function sendTextFrame(socket: WebSocket, tcp: Socket, text: string, done: (error?: Error | null) => void): void {
  if (!framesWritable(socket, tcp)) {
    socket.send(text, done);
    return;
  }
  tcp.write(textFrame(text), done);
}

/**
 * Sends `text` as {@link sendTextFrame} does, but only if it goes to the kernel behind
 * nothing: the connection open and none of its data waiting in user space. Returns whether
 * it was sent. So a connection that cannot keep up holds at most one such frame in memory;
 * what it falls behind on stays with its sender (a subscription's bounded queue).
 */
export function sendTextFrameNow(socket: WebSocket, tcp: Socket, text: string): boolean {
  if (!framesWritable(socket, tcp) || tcp.writableLength > 0) return false;
  // A write error reaches ws through the socket's "error" event and closes the connection.
  tcp.write(textFrame(text));
  return true;
}

/** Whether frames may be written to `tcp` beside ws's Sender (see {@link sendTextFrame}). */
function framesWritable(socket: WebSocket, tcp: Socket): boolean {
  return socket.readyState === socket.OPEN && socket.extensions === "" && !tcp.destroyed;
}

/** `text` as one unmasked, unfragmented text frame: header and payload in one buffer. */
function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81; // FIN, opcode 1 (text)
  if (headerLength === 2) {
    frame[1] = length;
  } else if (headerLength === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(length, 6);
  }
  frame.write(text, headerLength, "utf8");
  return frame;
}
