import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SimulatorOptions } from "../../src/sim/index.js";
import { startSimWithKubeconfig, type SimWithKubeconfig } from "./sim-cluster.js";

/**
 * A TCP relay on a fixed local port that can be switched off (every connection cut, and new
 * ones refused, as when an apiserver dies) and on again on the same port.
 */
export interface TcpRelay {
  port: number;
  /** Cuts every connection and stops listening: connections are refused until `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {});
        }
        client.pipe(upstream).pipe(client);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
      });
      next.once("error", reject);
      next.listen(port, "127.0.0.1", () => {
        port = (next.address() as { port: number }).port;
        server = next;
        resolve();
      });
    });
  const pause = async () => {
    const old = server;
    server = undefined;
    if (!old) return;
    const closed = new Promise<void>((resolve) => old.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen();
  return {
    get port() {
      return port;
    },
    pause,
    resume: async () => {
      if (!server) await listen();
    },
    close: pause,
  };
}

/** A simulator reached through a {@link TcpRelay}: its kubeconfig names the relay's port. */
export interface RelayedSim extends SimWithKubeconfig {
  relay: TcpRelay;
}

export async function startRelayedSim(options: SimulatorOptions): Promise<RelayedSim> {
  const inner = await startSimWithKubeconfig(options);
  const relay = await startTcpRelay(Number(new URL(inner.sim.url).port));
  const dir = mkdtempSync(join(tmpdir(), "ni-relayed-"));
  const kubeconfigPath = join(dir, "config");
  writeFileSync(kubeconfigPath, inner.sim.kubeconfig().replaceAll(inner.sim.url, `http://127.0.0.1:${relay.port}`));
  return {
    ...inner,
    kubeconfigPath,
    relay,
    async stop() {
      await relay.close();
      await inner.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
