// Drives graphctl serve with the official @langchain/langgraph-sdk client:
// node test.mjs http://127.0.0.1:PORT
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node test.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });

const step = async (name, fn) => {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}: ${err.stack || err}`);
    process.exit(1);
  }
};

await step("assistants", async () => {
  const list = await client.assistants.search({});
  const ids = list.map((a) => a.assistant_id);
  assert.ok(ids.includes("slot_filling"), `assistants: ${ids}`);
  const graph = await client.assistants.getGraph("slot_filling");
  assert.ok(graph.nodes.some((n) => n.id === "__start__"));
});

let thread;
await step("create thread", async () => {
  thread = await client.threads.create({ metadata: { suite: "sdk" } });
  assert.ok(thread.thread_id);
});

await step("stream a slot-filling run", async () => {
  const events = [];
  let last;
  for await (const chunk of client.runs.stream(thread.thread_id, "slot_filling", {
    input: { messages: [{ role: "user", content: "My dishwasher WDT780SAEM1 is leaking" }] },
    streamMode: ["values", "updates", "messages-tuple"],
  })) {
    events.push(chunk.event);
    if (chunk.event === "values") last = chunk.data;
  }
  assert.equal(events[0], "metadata");
  assert.ok(events.includes("updates") && events.includes("messages"), `events: ${events}`);
  const reply = last.messages.at(-1);
  assert.equal(reply.type, "ai");
  assert.match(reply.content, /WDT780SAEM1/);
  assert.equal(last.model, "WDT780SAEM1");
});

await step("second turn with wait", async () => {
  const values = await client.runs.wait(thread.thread_id, "slot_filling", {
    input: { messages: [{ role: "human", content: "I want to fix it" }] },
  });
  assert.equal(values.goal, "diagnose_repair");
  assert.match(values.messages.at(-1).content, /diagnose_repair/);
});

await step("interrupt and resume with command", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "approve", { input: {} });
  assert.ok(Array.isArray(first.__interrupt__) && first.__interrupt__.length === 1, JSON.stringify(first));
  assert.equal(first.__interrupt__[0].value.message, "Approve it? (yes/no)");
  const state = await client.threads.getState(t.thread_id);
  assert.deepEqual(state.next, ["ask"]);
  assert.equal(state.tasks[0].interrupts[0].id, first.__interrupt__[0].id);
  let final;
  for await (const chunk of client.runs.stream(t.thread_id, "approve", { command: { resume: "yes" } })) {
    if (chunk.event === "values") final = chunk.data;
  }
  assert.equal(final.approved, "yes");
  assert.equal(final.messages.at(-1).content, "Approved.");
});

await step("resume a cognitive confirmation (HITL) with command", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "cognitive", {
    input: { messages: [{ role: "user", content: "Please book me a study session before my exam" }] },
  });
  assert.ok(Array.isArray(first.__interrupt__) && first.__interrupt__.length === 1, JSON.stringify(first));
  assert.equal(first.__interrupt__[0].value.title, "Schedule a study session");
  const waiting = first.contracts.find((c) => c.action_type === "ecs_request");
  assert.equal(waiting.status, "WAITING");
  let final;
  for await (const chunk of client.runs.stream(t.thread_id, "cognitive", {
    command: { resume: { date: "2026-12-02", time: "19:00" } },
    streamMode: "values",
  })) {
    if (chunk.event === "values") final = chunk.data;
  }
  const done = final.contracts.find((c) => c.action_type === "ecs_request");
  assert.equal(done.status, "COMPLETED");
  assert.deepEqual(done.result, { date: "2026-12-02", time: "19:00" });
  assert.equal(final.messages.at(-1).content, "Done: your study session is booked.");
});

await step("history", async () => {
  const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
  assert.ok(history.length >= 2, `history has ${history.length} states`);
  assert.equal(history[0].values.goal, "diagnose_repair");
  assert.ok(!("goal" in history.at(-1).values));
});

await step("runs list and join", async () => {
  const runs = await client.runs.list(thread.thread_id);
  assert.equal(runs.length, 2);
  assert.ok(runs.every((r) => r.status === "success"));
  const run = await client.runs.create(thread.thread_id, "slot_filling", {
    input: { messages: [{ role: "user", content: "thanks" }] },
  });
  await client.runs.join(thread.thread_id, run.run_id);
  const done = await client.runs.get(thread.thread_id, run.run_id);
  assert.equal(done.status, "success");
});

await step("store", async () => {
  await client.store.putItem(["sdk", "u1"], "pref", { color: "blue", text: "likes blue whales" });
  const item = await client.store.getItem(["sdk", "u1"], "pref");
  assert.equal(item.value.color, "blue");
  const found = await client.store.searchItems(["sdk"], { query: "whales" });
  assert.equal(found.items[0].key, "pref");
  const ns = await client.store.listNamespaces({ prefix: ["sdk"] });
  assert.deepEqual(ns.namespaces, [["sdk", "u1"]]);
  await client.store.deleteItem(["sdk", "u1"], "pref");
});

console.log("all ok");
