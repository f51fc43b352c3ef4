// A run's durability through the official @langchain/langgraph-sdk client:
// sync, async and exit (and checkpointDuring false) runs answer and stream
// the same and leave the same history; an unknown mode is refused.
// node durability.mjs http://127.0.0.1:PORT (graph: echo)
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step, collect } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node durability.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
const hi = (text) => ({ messages: [{ role: "user", content: text }] });
const modes = [{ durability: "sync" }, { durability: "async" }, { durability: "exit" }, { checkpointDuring: false }, {}];

await step("runs.wait in every durability mode answers and leaves the same history", async () => {
  const lengths = [];
  for (const mode of modes) {
    const t = await client.threads.create();
    const values = await client.runs.wait(t.thread_id, "echo", { input: hi("wait"), ...mode });
    assert.equal(values.messages.at(-1).content, "You said: wait", JSON.stringify(mode));
    const history = await client.threads.getHistory(t.thread_id);
    lengths.push(history.length);
    assert.equal(history[0].values.messages.at(-1).content, "You said: wait", JSON.stringify(mode));
  }
  assert.ok(lengths.every((n) => n === lengths[0] && n > 0), `history lengths ${lengths}`);
});

await step("runs.stream in every durability mode streams the same frames", async () => {
  for (const mode of modes) {
    const t = await client.threads.create();
    const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: hi("stream"), streamMode: ["values", "updates"], ...mode }));
    assert.deepEqual(chunks.map((c) => c.event), ["metadata", "values", "updates", "values", "end"], JSON.stringify(mode));
    assert.equal(chunks.at(-2).data.messages.at(-1).content, "You said: stream", JSON.stringify(mode));
  }
});

await step("an unknown durability is refused with 422", async () => {
  const t = await client.threads.create();
  await assert.rejects(client.runs.wait(t.thread_id, "echo", { input: hi("x"), durability: "eventually" }), (err) => {
    assert.equal(err.status, 422);
    assert.match(String(err.message), /durability/);
    return true;
  });
});
