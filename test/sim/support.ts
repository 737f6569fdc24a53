/** Shared helpers for the simulator tests. */
import { KubeConfig } from "@kubernetes/client-node";
import type { Simulator } from "../../src/sim/index.js";

/** A client-node KubeConfig pointed at a simulator, from its own kubeconfig text. */
export function kubeConfigFor(sim: Simulator): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return kc;
}

/** The Status body of a client-node ApiException. */
export function statusOf(err: unknown): { code: number; reason: string; message: string; details?: any } {
  const body = (err as { body?: unknown }).body;
  return (typeof body === "string" ? JSON.parse(body) : body) as never;
}

/** Poll until `check` returns a value (wall time bounded). */
export async function eventually<T>(check: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Lines of a watch stream read until it ends (or `max` lines). */
export async function readWatch(url: string, max = Infinity): Promise<any[]> {
  const res = await fetch(url);
  const out: any[] = [];
  const decoder = new TextDecoder();
  let buf = "";
  const reader = res.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      out.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
      if (out.length >= max) {
        await reader.cancel();
        return out;
      }
    }
  }
  return out;
}
