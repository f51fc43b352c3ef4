// Threads as a whole through the official @langchain/langgraph-sdk client:
// a thread is busy while a run created on it waits for its start time
// (threads.get and threads.search agree), and threads.copy of a thread
// that waits inside a subgraph gives a thread whose answers go on in the
// subgraph, the original untouched.
// node threads.mjs http://127.0.0.1:PORT (serving the trip graph, whose
// subgraph node ask asks a, then b)
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node threads.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl });

const searched = async (status, id) =>
  (await client.threads.search({ status, ids: [id], limit: 10 })).map((t) => t.thread_id);

await step("a thread whose run waits for its start time is busy, idle once it is cancelled", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "trip", { input: { topic: "later" }, afterSeconds: 3600 });
  assert.equal(run.status, "pending");
  assert.equal((await client.threads.get(t.thread_id)).status, "busy");
  assert.deepEqual(await searched("busy", t.thread_id), [t.thread_id]);
  assert.deepEqual(await searched("idle", t.thread_id), []);
  await client.runs.cancel(t.thread_id, run.run_id);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
  assert.deepEqual(await searched("idle", t.thread_id), [t.thread_id]);
});

await step("threads.copy of a thread waiting inside a subgraph resumes the subgraph on the copy", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "trip", { input: { topic: "bees" } });
  await client.runs.wait(t.thread_id, "trip", { command: { resume: "x" } });
  const before = await client.threads.getHistory(t.thread_id, { limit: 100 });

  const copy = await client.threads.copy(t.thread_id);
  assert.notEqual(copy.thread_id, t.thread_id);
  assert.equal(copy.status, "interrupted");
  const state = await client.threads.getState(copy.thread_id, undefined, { subgraphs: true });
  assert.deepEqual(state.next, ["ask"]);
  const child = state.tasks[0].state;
  assert.equal(child.values.a, "x", `the copy's subgraph state: ${JSON.stringify(child)}`);
  assert.equal(child.checkpoint.thread_id, copy.thread_id);
  const history = await client.threads.getHistory(copy.thread_id, { limit: 100 });
  assert.deepEqual(
    history.map((s) => s.checkpoint.checkpoint_id),
    before.map((s) => s.checkpoint.checkpoint_id),
  );

  const done = await client.runs.wait(copy.thread_id, "trip", { command: { resume: "y" } });
  assert.equal(done.report, "bees:x,y");
  assert.equal((await client.threads.get(copy.thread_id)).status, "idle");

  const orig = await client.threads.get(t.thread_id);
  assert.equal(orig.status, "interrupted");
  assert.equal((await client.threads.getHistory(t.thread_id, { limit: 100 })).length, before.length);
  const other = await client.runs.wait(t.thread_id, "trip", { command: { resume: "z" } });
  assert.equal(other.report, "bees:x,z");
});
