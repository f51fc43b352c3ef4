// The node cache over the Agent Server API through the official
// @langchain/langgraph-sdk client: node nodecache.mjs http://127.0.0.1:PORT
// Graph: node_cache (examples/node-cache), whose answer node asks a model once
// per question (cache key lower(trim(question))). The Go test that runs this
// script serves one model reply and checks that the model was asked once.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { collect, step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node nodecache.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });

// ask runs the graph on a new thread and returns the stream's chunks.
const ask = async (question) => {
  const thread = await client.threads.create();
  const chunks = await collect(
    client.runs.stream(thread.thread_id, "node_cache", {
      input: { question },
      streamMode: ["custom", "events", "updates"],
    }),
  );
  const errors = chunks.filter((c) => c.event === "error");
  assert.deepEqual(errors, [], "the run failed");
  return { thread, chunks };
};

const cacheHits = (chunks) => chunks.filter((c) => c.event === "custom" && c.data?.type === "cache_hit");
const answerUpdate = (chunks) => chunks.find((c) => c.event === "updates" && c.data?.answer)?.data.answer;

await step("the first question runs the node: the model answers, no cache hit", async () => {
  const { chunks } = await ask("Capital of France?");
  assert.deepEqual(cacheHits(chunks), []);
  assert.deepEqual(answerUpdate(chunks), { answer: "Paris" });
});

await step("an equal key on another thread is a cache hit in the custom and events streams, with the stored answer", async () => {
  const { thread, chunks } = await ask("  capital of FRANCE?");
  const hits = cacheHits(chunks);
  assert.equal(hits.length, 1, `custom frames: ${JSON.stringify(chunks.filter((c) => c.event === "custom"))}`);
  assert.equal(hits[0].data.payload.node, "answer");
  assert.match(hits[0].data.payload.key, /^[0-9a-f]{64}$/);
  const custom = chunks.filter((c) => c.event === "events" && c.data?.event === "on_custom_event");
  assert.ok(
    custom.some((c) => c.data.data?.type === "cache_hit" && c.data.name === "answer"),
    `events stream: ${JSON.stringify(custom)}`,
  );
  // The stored update is applied as the node's update, and is in the state.
  assert.deepEqual(answerUpdate(chunks), { answer: "Paris" });
  const state = await client.threads.getState(thread.thread_id);
  assert.equal(state.values.answer, "Paris");
  assert.equal(state.values.question, "  capital of FRANCE?");
});
