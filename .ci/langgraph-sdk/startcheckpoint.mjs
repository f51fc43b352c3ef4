// A turn's input shows on the thread while its first node runs, as in
// LangGraph (the start checkpoint, step 0, is written before that node):
// node startcheckpoint.mjs http://127.0.0.1:PORT
// Graph: slow (its first node is held until GRAPHCTL_SERVERTEST_GATE/THREAD.release exists).
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { collect, step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node startcheckpoint.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });
const gate = process.env.GRAPHCTL_SERVERTEST_GATE;

// until polls check until it holds, for at most 10 seconds.
const until = async (what, check) => {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(5)) {
    if (await check()) return;
  }
  assert.fail(`${what} never held`);
};

const showsMessage = (state) =>
  state.values.messages?.length === 1 && state.values.messages[0].id === "h1" && state.next.length === 1 && state.next[0] === "work";

await step("while a slow first node runs, getState shows the message sent; after runs.cancel, getState and getHistory still do", async () => {
  assert.ok(gate, "GRAPHCTL_SERVERTEST_GATE names the slow node's gate directory");
  const t = await client.threads.create();
  const stream = client.runs.stream(t.thread_id, "slow", {
    input: { messages: [{ type: "human", content: "hello", id: "h1" }] },
    streamMode: "values",
  });
  const first = await stream.next();
  assert.equal(first.value.event, "metadata");
  const runID = first.value.data.run_id;
  const rest = collect(stream);
  await until("the slow node started", () => existsSync(join(gate, `${t.thread_id}.started`)));
  await until("getState shows the message", async () => showsMessage(await client.threads.getState(t.thread_id)));
  const running = await client.threads.getState(t.thread_id);
  assert.equal(running.metadata.source, "loop");
  assert.equal(running.metadata.step, 0);
  assert.deepEqual(running.tasks.map((task) => task.name), ["work"]);

  await client.runs.cancel(t.thread_id, runID, true);
  await rest;
  const after = await client.threads.getState(t.thread_id);
  assert.ok(showsMessage(after), `after the cancel: ${JSON.stringify(after)}`);
  const history = await client.threads.getHistory(t.thread_id, { limit: 10 });
  assert.deepEqual(history.map((s) => [s.metadata.source, s.metadata.step]), [["loop", 0], ["input", -1]]);
  assert.equal(history[0].values.messages[0].content, "hello");
  assert.deepEqual(history[1].values, {});
  assert.deepEqual(history[1].next, ["__start__"]);

  // A run with no input goes on from there: the first node runs, with the
  // message once.
  writeFileSync(join(gate, `${t.thread_id}.release`), "");
  const values = await client.runs.wait(t.thread_id, "slow", { input: null });
  assert.deepEqual(values.messages.map((m) => m.content), ["hello", "Finished."]);
  assert.deepEqual(values.log, ["work"]);
});
