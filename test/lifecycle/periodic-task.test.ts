import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { PeriodicTask } from "../../src/lifecycle/periodic-task.js";

/** A promise and the function that settles it, so a test decides when a run ends. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe("a periodic task", () => {
  // The task's timers are unref'd (they never keep a process alive): this keeps the test's alive.
  let alive: NodeJS.Timeout;
  before(() => void (alive = setInterval(() => {}, 1_000)));
  after(() => clearInterval(alive));

  test("runs at once when asked, then again after each run, one run at a time", async () => {
    const runs: number[] = [];
    const next = gate();
    let inRun = 0;
    let overlapped = false;
    const task = new PeriodicTask({
      run: async () => {
        overlapped ||= inRun > 0;
        inRun++;
        runs.push(runs.length);
        await new Promise((r) => setTimeout(r, 5));
        inRun--;
        if (runs.length === 3) next.open();
      },
      delayMs: () => 1,
      immediately: true,
    });
    task.start();
    task.start(); // a second start is no second loop
    await next.promise;
    await task.stop();
    assert.deepEqual(runs.slice(0, 3), [0, 1, 2]);
    assert.equal(overlapped, false);
  });

  test("stop() waits for the run in progress, and no run starts after it", async () => {
    const running = gate();
    const release = gate();
    let runs = 0;
    // The next run is planned by asking for its delay, right after a run ends: counting the
    // questions tells whether one was planned, without waiting to see whether it comes.
    let plans = 0;
    const task = new PeriodicTask({
      run: async () => {
        runs++;
        running.open();
        await release.promise;
      },
      delayMs: () => (plans++, 0),
      immediately: true,
    });
    task.start();
    await running.promise;
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false, "stop() resolved while a run was still going");
    release.open();
    await stopping;
    assert.equal(runs, 1);
    assert.equal(plans, 0, "a next run was planned after stop()");
    assert.equal(task.started, false);
  });

  test("a failed run goes to onError and the task goes on; the first run waits for the delay unless told otherwise", async () => {
    const errors: unknown[] = [];
    const done = gate();
    const planned: number[] = [];
    let runs = 0;
    const start = Date.now();
    const task = new PeriodicTask({
      run: async (plannedAt) => {
        planned.push(plannedAt.getTime());
        if (++runs === 1) throw new Error("first fails");
        done.open();
      },
      delayMs: () => 30,
      onError: (error) => errors.push((error as Error).message),
    });
    task.start();
    await done.promise;
    await task.stop();
    assert.deepEqual(errors, ["first fails"]);
    assert.equal(runs, 2);
    assert.ok(planned[0]! - start >= 30, `first run planned ${planned[0]! - start} ms after start`);
  });
});
