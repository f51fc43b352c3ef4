// Runs created later through the official @langchain/langgraph-sdk client:
// afterSeconds (sent as after_seconds) creates the run at once, pending,
// with its start time as created_at, and the run starts no earlier than
// that; wait and stream answer once it has run; a run waiting for its start
// time is listed as pending and can be cancelled.
// node schedule.mjs http://127.0.0.1:PORT (graph: echo)
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step, collect } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node schedule.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
const hi = (text) => ({ messages: [{ role: "user", content: text }] });
// millis reads an RFC 3339 time with any number of fractional digits.
const millis = (s) => Date.parse(s.replace(/(\.\d{3})\d+/, "$1"));

await step("runs.create with afterSeconds returns the run pending and runs it after the delay", async () => {
  const t = await client.threads.create();
  const before = Date.now();
  const run = await client.runs.create(t.thread_id, "echo", { input: hi("later"), afterSeconds: 1 });
  assert.equal(run.status, "pending");
  assert.ok(millis(run.created_at) >= before + 1000, `created_at ${run.created_at} is the start time, a second after ${new Date(before).toISOString()}`);
  const values = await client.runs.join(t.thread_id, run.run_id);
  assert.equal(values.messages.at(-1).content, "You said: later");
  assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "success");
  const state = await client.threads.getState(t.thread_id);
  assert.ok(millis(state.created_at) >= millis(run.created_at), `state written at ${state.created_at}, before the start time ${run.created_at}`);
});

await step("runs.wait and runs.stream with afterSeconds answer once the run has run", async () => {
  const t = await client.threads.create();
  const values = await client.runs.wait(t.thread_id, "echo", { input: hi("waited"), afterSeconds: 1 });
  assert.equal(values.messages.at(-1).content, "You said: waited");
  const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: hi("streamed"), afterSeconds: 1 }));
  assert.deepEqual(chunks.map((c) => c.event), ["metadata", "values", "values", "end"]);
  assert.equal(chunks.at(-2).data.messages.at(-1).content, "You said: streamed");
  const stateless = await client.runs.wait(null, "echo", { input: hi("no thread"), afterSeconds: 1 });
  assert.equal(stateless.messages.at(-1).content, "You said: no thread");
});

await step("a run waiting for its start time is pending, busy for reject, and cancelled", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "echo", { input: hi("much later"), afterSeconds: 3600 });
  const pending = await client.runs.list(t.thread_id, { status: "pending" });
  assert.deepEqual(pending.map((r) => r.run_id), [run.run_id]);
  let refused;
  try {
    await client.runs.create(t.thread_id, "echo", { input: hi("now") });
  } catch (e) {
    refused = e;
  }
  assert.equal(refused?.status, 409, `a reject run beside a scheduled one: ${refused}`);
  await client.runs.cancel(t.thread_id, run.run_id, true);
  assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "interrupted");
  const now = await client.runs.wait(t.thread_id, "echo", { input: hi("now") });
  assert.equal(now.messages.at(-1).content, "You said: now");
});

await step("a negative afterSeconds is refused naming after_seconds", async () => {
  const t = await client.threads.create();
  let err;
  try {
    await client.runs.create(t.thread_id, "echo", { input: hi("x"), afterSeconds: -1 });
  } catch (e) {
    err = e;
  }
  assert.equal(err?.status, 422, String(err));
  assert.match(String(err.message), /after_seconds/);
});
