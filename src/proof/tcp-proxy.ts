/**
 * A TCP proxy between the replicas and the simulator, so that a fault can cut every connection
 * through it at once (watches, keep-alive requests, Lease renewals) as a network partition's end does.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export class TcpProxy {
  private readonly pairs = new Set<[Socket, Socket]>();
  private readonly server: Server;
  port = 0;

  private constructor(targetPort: number, targetHost: string) {
    this.server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      const end = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  static async start(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort, targetHost);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once("error", reject);
      proxy.server.listen(0, "127.0.0.1", () => resolve());
    });
    const address = proxy.server.address();
    proxy.port = typeof address === "object" && address ? address.port : 0;
    return proxy;
  }

  /** Reset every connection through the proxy; new ones are accepted at once. Returns how many. */
  cutAll(): number {
    const n = this.pairs.size;
    for (const [a, b] of this.pairs) {
      a.resetAndDestroy();
      b.destroy();
    }
    this.pairs.clear();
    return n;
  }

  async stop(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
