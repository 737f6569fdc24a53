import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";

/** How many connections the HTTP server holds: all callers together, and from one client address. */
export interface ConnectionLimits {
  total: number;
  perAddress: number;
}

/**
 * File descriptors kept out of the connections' reach: the database pool, the clusters' watches,
 * PGlite's files, the tokens file, Prometheus scrapes of the process.
 */
const RESERVED_DESCRIPTORS = 1_024;

/** The total actually kept: the configured one, or less when the process may not open that many files. */
export function effectiveTotal(configured: number, openFilesLimit = softOpenFilesLimit()): number {
  if (openFilesLimit === undefined) return configured;
  return Math.max(64, Math.min(configured, openFilesLimit - RESERVED_DESCRIPTORS));
}

/** The soft "Max open files" of this process (Linux), undefined where it cannot be read or is unlimited. */
function softOpenFilesLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

interface Tracked {
  address: string;
  /** Answering a request, or upgraded to a WebSocket: never closed to make room. */
  busy: boolean;
}

/**
 * Bounds the connections `server` holds, per client address and in total. A connection past a
 * bound makes room by closing the oldest idle one (connected but sending no request, or kept
 * alive between requests) of that address, or of all when the total is reached, as a proxy
 * reuses its least recently used connection; only when every connection is busy is the new one
 * refused. So idle connections, however many, cannot keep /healthz or another caller out, and
 * the process never reaches its file-descriptor limit.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): { open(): number } {
  // Sets iterate in insertion order: the first idle one found is the oldest.
  const all = new Map<Socket, Tracked>();
  const byAddress = new Map<string, Set<Socket>>();

  const oldestIdle = (sockets: Iterable<Socket>): Socket | undefined => {
    for (const socket of sockets) if (!all.get(socket)?.busy) return socket;
    return undefined;
  };
  const forget = (socket: Socket) => {
    const tracked = all.get(socket);
    if (!tracked) return;
    all.delete(socket);
    const mine = byAddress.get(tracked.address);
    mine?.delete(socket);
    if (mine?.size === 0) byAddress.delete(tracked.address);
  };

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const mine = byAddress.get(address);
    const full = (mine?.size ?? 0) >= limits.perAddress ? mine : all.size >= limits.total ? all.keys() : undefined;
    if (full) {
      const victim = oldestIdle(full);
      if (!victim) {
        socket.destroy();
        return;
      }
      forget(victim);
      victim.destroy();
    }
    all.set(socket, { address, busy: false });
    let set = byAddress.get(address);
    if (!set) byAddress.set(address, (set = new Set()));
    set.add(socket);
    socket.once("close", () => forget(socket));
  });
  server.on("request", (req, res) => {
    const tracked = all.get(req.socket);
    if (!tracked) return;
    tracked.busy = true;
    res.once("close", () => {
      tracked.busy = false;
    });
  });
  server.on("upgrade", (req) => {
    const tracked = all.get(req.socket);
    if (tracked) tracked.busy = true;
  });
  return { open: () => all.size };
}
