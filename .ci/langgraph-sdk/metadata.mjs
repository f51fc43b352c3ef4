// A checkpoint's metadata through the official @langchain/langgraph-sdk
// client, as LangGraph records it: the run, thread, graph and assistant that
// wrote it, its source and step — on the thread's state and in its history,
// where a metadata filter finds the checkpoints of an assistant.
// node metadata.mjs http://127.0.0.1:PORT (graphs: echo)
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node metadata.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
const hi = (text) => ({ messages: [{ role: "user", content: text }] });

await step("each checkpoint's metadata names its run, thread, graph and assistant", async () => {
  const custom = await client.assistants.create({ graphId: "echo", name: "custom echo" });
  const t = await client.threads.create();
  const first = await client.runs.create(t.thread_id, "echo", { input: hi("one"), metadata: { who: "ann" } });
  await client.runs.join(t.thread_id, first.run_id);
  const second = await client.runs.create(t.thread_id, custom.assistant_id, { input: hi("two") });
  await client.runs.join(t.thread_id, second.run_id);

  const state = await client.threads.getState(t.thread_id);
  assert.equal(state.metadata.run_id, second.run_id);
  assert.equal(state.metadata.assistant_id, custom.assistant_id);
  assert.equal(state.metadata.graph_id, "echo");
  assert.equal(state.metadata.thread_id, t.thread_id);
  assert.equal(state.metadata.source, "loop");
  assert.equal(typeof state.metadata.step, "number");
  assert.deepEqual(state.metadata.parents, {});

  const history = await client.threads.getHistory(t.thread_id, { limit: 100 });
  for (const h of history) {
    const want = h.metadata.run_id === first.run_id ? "echo" : custom.assistant_id;
    assert.equal(h.metadata.assistant_id, want, JSON.stringify(h.metadata));
    assert.equal(h.metadata.graph_id, "echo");
  }
  const ofFirst = history.filter((h) => h.metadata.run_id === first.run_id);
  assert.ok(ofFirst.length > 0 && ofFirst.every((h) => h.metadata.who === "ann"));

  const filtered = await client.threads.getHistory(t.thread_id, { limit: 100, metadata: { assistant_id: "echo" } });
  assert.deepEqual(filtered.map((h) => h.checkpoint_id), ofFirst.map((h) => h.checkpoint_id));
  const byId = await client.threads.getState(t.thread_id, ofFirst[0].checkpoint_id);
  assert.equal(byId.metadata.assistant_id, "echo");
});

await step("a state update's checkpoint shows the assistant of the thread's latest run", async () => {
  const custom = await client.assistants.create({ graphId: "echo", name: "updated echo" });
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, custom.assistant_id, { input: hi("run") });
  await client.threads.updateState(t.thread_id, { values: { note: "edited" } });
  const state = await client.threads.getState(t.thread_id);
  assert.equal(state.metadata.source, "update");
  assert.equal(state.metadata.assistant_id, custom.assistant_id);
  assert.equal(state.metadata.graph_id, "echo");
});
