// Drives graphctl serve with the official @langchain/langgraph-sdk client:
// node test.mjs http://127.0.0.1:PORT
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step } from "./steps.mjs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node test.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });

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

await step("CORS preflight from a browser origin", async () => {
  const res = await fetch(`${apiUrl}/threads/search`, {
    method: "OPTIONS",
    headers: {
      Origin: "http://localhost:3000",
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,x-api-key",
    },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get("access-control-allow-origin"), "http://localhost:3000");
  assert.match(res.headers.get("access-control-allow-headers"), /x-api-key/);
  const simple = await fetch(`${apiUrl}/assistants/search`, {
    method: "POST",
    headers: { Origin: "http://localhost:3000", "content-type": "application/json" },
    body: "{}",
  });
  assert.match(simple.headers.get("access-control-expose-headers"), /Content-Location/);
  const evil = await fetch(`${apiUrl}/threads/search`, {
    method: "OPTIONS",
    headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
  });
  assert.equal(evil.status, 403);
});

await step("threads list by metadata.graph_id (agent-chat-ui)", async () => {
  const found = await client.threads.search({ metadata: { graph_id: "slot_filling" }, limit: 100 });
  const mine = found.find((t) => t.thread_id === thread.thread_id);
  assert.ok(mine, "the thread of a slot_filling run is listed by its graph_id");
  assert.equal(mine.metadata.assistant_id, "slot_filling");
  assert.equal(mine.metadata.suite, "sdk");
});

await step("errors carry detail; bad paging is 422", async () => {
  await assert.rejects(client.threads.get("no-such-thread"), (err) => {
    assert.equal(err.status, 404);
    assert.ok(JSON.parse(err.text).detail.includes("not found"), err.text);
    return true;
  });
  await assert.rejects(client.threads.search({ limit: -1 }), (err) => err.status === 422);
  await assert.rejects(client.threads.getHistory(thread.thread_id, { limit: -1 }), (err) => err.status === 422);
  await assert.rejects(client.store.searchItems(["sdk"], { limit: -1 }), (err) => err.status === 422);
});

await step("threads: update, copy, count, patchState, values search, prune", async () => {
  const updated = await client.threads.update(thread.thread_id, { metadata: { label: "dishwasher" } });
  assert.equal(updated.metadata.label, "dishwasher");
  assert.equal(updated.metadata.suite, "sdk");
  const copy = await client.threads.copy(thread.thread_id);
  assert.notEqual(copy.thread_id, thread.thread_id);
  const copied = await client.threads.getState(copy.thread_id);
  assert.equal(copied.values.model, "WDT780SAEM1");
  const n = await client.threads.count({ metadata: { label: "dishwasher" } });
  assert.equal(n, 2);
  const byValues = await client.threads.search({ values: { model: "WDT780SAEM1" }, limit: 100 });
  assert.ok(byValues.some((t) => t.thread_id === copy.thread_id));
  await client.threads.patchState(copy.thread_id, { reviewed: "yes" });
  const patched = await client.threads.getState(copy.thread_id);
  assert.equal(patched.metadata.reviewed, "yes");
  const res = await fetch(`${apiUrl}/threads/prune`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ thread_ids: [copy.thread_id], strategy: "delete" }),
  });
  assert.deepEqual(await res.json(), { pruned_count: 1 });
  await assert.rejects(client.threads.get(copy.thread_id), (err) => err.status === 404);
});

await step("threads.create with supersteps", async () => {
  const t = await client.threads.create({
    graphId: "slot_filling",
    supersteps: [{ updates: [{ values: { messages: [{ role: "user", content: "hello" }] }, asNode: "__start__" }] }],
  });
  const st = await client.threads.getState(t.thread_id);
  assert.equal(st.values.messages[0].content, "hello");
});

await step("threads.search status busy while a run is active", async () => {
  const gate = process.env.GRAPHCTL_SERVERTEST_GATE;
  assert.ok(gate, "GRAPHCTL_SERVERTEST_GATE names the slow node's gate directory");
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "slow", { input: {} });
  const busy = await client.threads.search({ status: "busy", limit: 100 });
  assert.ok(busy.some((x) => x.thread_id === t.thread_id), "the thread is busy while its run waits");
  assert.equal((await client.threads.get(t.thread_id)).status, "busy");
  assert.ok((await client.threads.count({ status: "busy" })) >= 1);
  writeFileSync(join(gate, `${t.thread_id}.release`), "");
  await client.runs.join(t.thread_id, run.run_id);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
  const idle = await client.threads.search({ status: "busy", limit: 100 });
  assert.ok(!idle.some((x) => x.thread_id === t.thread_id));
});

await step("assistants: create, run, update, versions, setLatest, count, subgraphs, delete", async () => {
  const a = await client.assistants.create({ graphId: "slot_filling", name: "Repairs", metadata: { team: "sdk" }, config: { recursion_limit: 50 } });
  assert.equal(a.version, 1);
  assert.equal(a.graph_id, "slot_filling");
  const t = await client.threads.create();
  const values = await client.runs.wait(t.thread_id, a.assistant_id, {
    input: { messages: [{ role: "user", content: "My dishwasher WDT780SAEM1 is leaking" }] },
  });
  assert.equal(values.model, "WDT780SAEM1");
  const th = await client.threads.get(t.thread_id);
  assert.equal(th.metadata.assistant_id, a.assistant_id);
  assert.equal(th.metadata.graph_id, "slot_filling");
  const up = await client.assistants.update(a.assistant_id, { graphId: "slot_filling", name: "Repairs v2", metadata: { stage: "beta" } });
  assert.equal(up.version, 2);
  assert.equal(up.metadata.team, "sdk");
  const versions = await client.assistants.getVersions(a.assistant_id);
  assert.deepEqual(versions.map((v) => v.version), [2, 1]);
  const back = await client.assistants.setLatest(a.assistant_id, 1);
  assert.equal(back.name, "Repairs");
  assert.equal(await client.assistants.count({ metadata: { team: "sdk" } }), 1);
  const page = await client.assistants.search({ graphId: "slot_filling", includePagination: true, limit: 1 });
  assert.equal(page.assistants.length, 1);
  assert.equal(page.next, "1");
  assert.deepEqual(await client.assistants.getSubgraphs(a.assistant_id), {});
  await client.assistants.delete(a.assistant_id);
  await assert.rejects(client.assistants.get(a.assistant_id), (err) => err.status === 404);
});

await step("runs: delete, createBatch, cancel many, cancel a finished run", async () => {
  const runs = await client.runs.list(thread.thread_id);
  const finished = runs[0];
  // As on the Agent Server, cancelling a run that has ended leaves it as it is.
  await client.runs.cancel(thread.thread_id, finished.run_id);
  await client.runs.cancel(thread.thread_id, finished.run_id, true);
  assert.equal((await client.runs.get(thread.thread_id, finished.run_id)).status, finished.status);
  await assert.rejects(client.runs.cancel(thread.thread_id, "00000000-0000-4000-8000-000000000000"), (err) => err.status === 404);
  await client.runs.delete(thread.thread_id, finished.run_id);
  await assert.rejects(client.runs.get(thread.thread_id, finished.run_id), (err) => err.status === 404);
  const batch = await client.runs.createBatch([
    { assistantId: "slot_filling", input: { messages: [{ role: "user", content: "hi" }] } },
    { assistantId: "slot_filling", input: { messages: [{ role: "user", content: "hello" }] } },
  ]);
  assert.equal(batch.length, 2);
  assert.ok(batch.every((r) => r.run_id && r.status));
  const res = await fetch(`${apiUrl}/runs/cancel`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ status: "all" }),
  });
  assert.equal(res.status, 204);
});

await step("crons: thread and stateless, on schedule; search, count, update, delete", async () => {
  const t = await client.threads.create();
  const cron = await client.crons.createForThread(t.thread_id, "slot_filling", {
    schedule: "* * * * * *",
    input: { messages: [{ role: "user", content: "My dishwasher WDT780SAEM1 is leaking" }] },
  });
  assert.equal(cron.thread_id, t.thread_id);
  assert.ok(cron.next_run_date);
  let ran = [];
  for (let i = 0; i < 200 && !ran.some((r) => r.status === "success"); i++) {
    await new Promise((r) => setTimeout(r, 100));
    ran = await client.runs.list(t.thread_id);
  }
  assert.ok(ran.some((r) => r.status === "success"), "the cron ran on its thread");
  const updated = await client.crons.update(cron.cron_id, { enabled: false });
  assert.equal(updated.enabled, false);
  const stateless = await client.crons.create("slot_filling", { schedule: "0 9 * * *", input: {} });
  assert.equal(stateless.thread_id, null);
  const found = await client.crons.search({ threadId: t.thread_id });
  assert.deepEqual(found.map((c) => c.cron_id), [cron.cron_id]);
  assert.equal(await client.crons.count({ assistantId: "slot_filling" }), 2);
  await client.crons.delete(cron.cron_id);
  await client.crons.delete(stateless.cron_id);
  assert.equal(await client.crons.count(), 0);
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
  assert.equal(await client.store.getItem(["sdk", "u1"], "pref"), null);
});

console.log("all ok");
