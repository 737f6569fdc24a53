/** The pod garbage collector: pods bound to a node that no longer exists are removed. */
import type { StoreEvent } from "../store.js";
import { R } from "../storage-names.js";
import type { ClusterContext } from "./context.js";
import { WorkQueue } from "./work-queue.js";

export class PodGcController {
  private readonly goneNodes = new WorkQueue();

  constructor(private readonly ctx: ClusterContext) {}

  observe(e: StoreEvent): void {
    if (e.resource === R.nodes && e.type === "DELETED") this.goneNodes.add(e.entry.obj.metadata.name);
  }

  sync(): void {
    const { store } = this.ctx;
    this.goneNodes.drain((node) => {
      for (const key of [...store.byIndex(R.pods, "nodeName", node)]) store.remove(R.pods, key);
    });
  }
}
