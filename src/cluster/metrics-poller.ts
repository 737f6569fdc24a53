import { PeriodicTask } from "../lifecycle/periodic-task.js";
import type { Logger } from "../log/logger.js";
import { cpuMillicores, bytes } from "../k8s/quantity.js";
import { isNotFound, isServiceUnavailable, type KubeClient } from "./kube-client.js";
import type { NodeUsageSample } from "./model.js";

interface NodeMetricsList {
  items: { metadata: { name: string }; timestamp: string; usage: { cpu?: string; memory?: string } }[];
}

/**
 * Polls metrics.k8s.io for node usage. A cluster without the metrics API is normal: usage
 * is simply absent and nothing fails. Samples of nodes the API stops reporting are dropped.
 */
export class MetricsPoller {
  private samples = new Map<string, NodeUsageSample>();
  private readonly task: PeriodicTask;
  available = false;

  constructor(private readonly options: { client: KubeClient; logger: Logger; intervalMs: number }) {
    this.task = new PeriodicTask({ run: () => this.poll(), delayMs: () => this.options.intervalMs, immediately: true });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  sample(nodeName: string): NodeUsageSample | undefined {
    return this.samples.get(nodeName);
  }

  private async poll(): Promise<void> {
    try {
      const list = await this.options.client.getJson<NodeMetricsList>("/apis/metrics.k8s.io/v1beta1/nodes", {}, 10_000);
      const next = new Map<string, NodeUsageSample>();
      for (const item of list.items) {
        next.set(item.metadata.name, {
          cpuMillicores: item.usage.cpu ? cpuMillicores(item.usage.cpu) : 0,
          memoryBytes: item.usage.memory ? bytes(item.usage.memory) : 0,
          timestamp: item.timestamp,
        });
      }
      this.samples = next;
      if (!this.available) this.options.logger.info("metrics.k8s.io available: node usage on");
      this.available = true;
    } catch (error) {
      const missing = isNotFound(error) || isServiceUnavailable(error);
      if (this.available || !missing) {
        this.options.logger.info({ err: (error as Error).message }, missing ? "metrics.k8s.io not served: node usage off" : "metrics poll failed");
      }
      this.available = false;
      // Stale samples would be worse than none: usage is null until the API answers again.
      this.samples = new Map();
    }
  }
}
