// Time travel, continuing runs, messages and stream modes of graphctl serve
// through the official @langchain/langgraph-sdk client, as LangGraph's UIs
// use them: node timetravel.mjs http://127.0.0.1:PORT
// Graphs: echo (one reply node), approve (an interrupt), slow (a node held
// until GRAPHCTL_SERVERTEST_GATE/THREAD.release exists).
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { collect, step } from "./steps.mjs";
import { existsSync } from "node:fs";
import { join } from "node:path";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node timetravel.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const human = (content) => ({ type: "human", content });
// firstSeen is useStream's firstSeenState: the oldest state holding the message.
const firstSeen = (history, id) => history.findLast((s) => (s.values.messages ?? []).some((m) => m.id === id));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- 5. messages and ids ----

let thread;
await step("generated thread and run ids are UUIDs", async () => {
  thread = await client.threads.create({ graphId: "echo" });
  assert.match(thread.thread_id, uuid);
  const run = await client.runs.create(thread.thread_id, "echo", { input: { messages: [human("one")] } });
  assert.match(run.run_id, uuid);
  await client.runs.join(thread.thread_id, run.run_id);
});

await step("the id streamed in messages-tuple is the id stored in state", async () => {
  const chunks = await collect(
    client.runs.stream(thread.thread_id, "echo", { input: { messages: [human("two")] }, streamMode: ["messages-tuple", "values"] }),
  );
  const tuples = chunks.filter((c) => c.event === "messages");
  assert.ok(tuples.length > 0, "no messages-tuple events");
  const [msg, meta] = tuples.at(-1).data;
  assert.equal(meta.langgraph_node, "answer");
  const values = chunks.filter((c) => c.event === "values").at(-1).data;
  const stored = values.messages.at(-1);
  assert.equal(stored.type, "ai");
  assert.equal(msg.id, stored.id, "streamed and stored ids differ");
  assert.match(stored.id, uuid);
  for (const m of values.messages) assert.match(m.id, uuid);
});

await step("the legacy messages mode sends metadata and complete messages with the stored id", async () => {
  const chunks = await collect(client.runs.stream(thread.thread_id, "echo", { input: { messages: [human("three")] }, streamMode: "messages" }));
  const events = chunks.map((c) => c.event);
  assert.ok(events.includes("messages/metadata") && events.includes("messages/complete"), `events: ${events}`);
  const complete = chunks.filter((c) => c.event === "messages/complete").at(-1).data[0];
  const state = await client.threads.getState(thread.thread_id);
  assert.equal(complete.id, state.values.messages.at(-1).id);
  assert.equal(complete.type, "ai");
  assert.equal(complete.content, "You said: three");
  const meta = chunks.find((c) => c.event === "messages/metadata").data;
  assert.ok(meta[complete.id]?.metadata?.langgraph_node === "answer", JSON.stringify(meta));
});

await step("content blocks are kept, not flattened", async () => {
  const t = await client.threads.create();
  const blocks = [
    { type: "text", text: "what is in this picture?" },
    { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
  ];
  const values = await client.runs.wait(t.thread_id, "approve", { input: { messages: [{ type: "human", content: blocks }] } });
  assert.deepEqual(values.messages[0].content, blocks);
});

await step("a remove message deletes a message", async () => {
  const before = await client.threads.getState(thread.thread_id);
  const gone = before.values.messages[0];
  await client.threads.updateState(thread.thread_id, { values: { messages: [{ type: "remove", id: gone.id }] } });
  const after = await client.threads.getState(thread.thread_id);
  assert.equal(after.values.messages.length, before.values.messages.length - 1);
  assert.ok(!after.values.messages.some((m) => m.id === gone.id));
});

// ---- 3. time travel ----

let tt;
await step("a turn starts with an input checkpoint (source input, step -1), then its start checkpoint (step 0)", async () => {
  tt = await client.threads.create({ graphId: "echo" });
  await client.runs.wait(tt.thread_id, "echo", { input: { messages: [human("hello")] } });
  await client.runs.wait(tt.thread_id, "echo", { input: { messages: [human("again")] } });
  const history = await client.threads.getHistory(tt.thread_id, { limit: 10 });
  assert.deepEqual(
    history.map((s) => [s.metadata.source, s.metadata.step]),
    [["loop", 4], ["loop", 3], ["input", 2], ["loop", 1], ["loop", 0], ["input", -1]],
  );
  const first = history.at(-1);
  assert.deepEqual(first.values, {});
  // As in LangGraph, an input checkpoint's next task is __start__, carrying
  // the pending input.
  assert.deepEqual(first.next, ["__start__"]);
  assert.deepEqual(first.tasks.map((t) => t.name), ["__start__"]);
  assert.deepEqual(first.tasks[0].result.messages.map((m) => m.content), ["hello"]);
  assert.deepEqual(history[2].next, ["__start__"]);
  assert.deepEqual(history[2].tasks[0].result.messages.map((m) => m.content), ["again"]);
  // As in LangGraph, the start checkpoint holds the input applied, with the
  // first node next: the state while that node runs.
  const start = history.at(-2);
  assert.deepEqual(start.values.messages.map((m) => m.content), ["hello"]);
  assert.deepEqual(start.next, ["answer"]);
  assert.deepEqual(start.metadata.writers, ["input"]);
  assert.equal(first.parent_checkpoint, null);
  // graphctl's metadata.writers names what wrote each checkpoint.
  assert.ok(history[0].metadata.writers.includes("answer"), JSON.stringify(history[0].metadata));
  assert.deepEqual(first.metadata.writers, []);
  for (let i = 0; i + 1 < history.length; i++) {
    assert.equal(history[i].parent_checkpoint.checkpoint_id, history[i + 1].checkpoint.checkpoint_id);
  }
  for (const s of history) assert.match(s.checkpoint.checkpoint_id, uuid);
});

await step("getState at a checkpoint, by id and by checkpoint object", async () => {
  const history = await client.threads.getHistory(tt.thread_id);
  const old = history[2];
  const byObject = await client.threads.getState(tt.thread_id, { checkpoint_id: old.checkpoint.checkpoint_id, checkpoint_ns: "" });
  assert.deepEqual(byObject.values, old.values);
  assert.equal(byObject.checkpoint.checkpoint_id, old.checkpoint.checkpoint_id);
  const byId = await client.threads.getState(tt.thread_id, old.checkpoint.checkpoint_id);
  assert.deepEqual(byId.values, old.values);
  await assert.rejects(client.threads.getState(tt.thread_id, { checkpoint_id: "00000000-0000-6000-8000-000000000000" }), /404|not found/i);
});

await step("regenerate the last answer from its parent checkpoint (a fork)", async () => {
  const history = await client.threads.getHistory(tt.thread_id);
  const head = history[0];
  const answer = head.values.messages.at(-1);
  const parent = firstSeen(history, answer.id).parent_checkpoint;
  const values = await client.runs.wait(tt.thread_id, "echo", { input: null, checkpoint: parent });
  assert.deepEqual(values.messages.map((m) => m.content), ["hello", "You said: hello", "again", "You said: again"]);
  assert.notEqual(values.messages.at(-1).id, answer.id, "the regenerated answer is a new message");
  assert.equal(values.messages[2].id, head.values.messages[2].id, "the replayed input keeps its id");
  const after = await client.threads.getHistory(tt.thread_id);
  const children = after.filter((s) => s.parent_checkpoint?.checkpoint_id === parent.checkpoint_id);
  assert.equal(children.length, 2, "the parent checkpoint has two branches");
  assert.equal(after[0].values.messages.at(-1).id, values.messages.at(-1).id, "the fork is the thread's newest state");
});

await step("edit a past message: new input from the parent checkpoint", async () => {
  const history = await client.threads.getHistory(tt.thread_id, { limit: 50 });
  const firstHuman = history[0].values.messages[0];
  const parent = firstSeen(history, firstHuman.id).parent_checkpoint;
  const values = await client.runs.wait(tt.thread_id, "echo", { input: { messages: [human("hi (edited)")] }, checkpoint: parent });
  assert.deepEqual(values.messages.map((m) => m.content), ["hi (edited)", "You said: hi (edited)"]);
  const state = await client.threads.getState(tt.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.content), ["hi (edited)", "You said: hi (edited)"]);
});

await step("a run from a past checkpoint_id forks the thread there", async () => {
  const history = await client.threads.getHistory(tt.thread_id, { limit: 50 });
  const target = history.find((s) => s.values.messages?.at(-1)?.content === "You said: hello");
  const values = await client.runs.wait(tt.thread_id, "echo", {
    input: { messages: [human("branching")] },
    checkpointId: target.checkpoint.checkpoint_id,
  });
  assert.deepEqual(values.messages.map((m) => m.content), ["hello", "You said: hello", "branching", "You said: branching"]);
});

await step("history honours limit, before, metadata and checkpoint", async () => {
  const all = await client.threads.getHistory(tt.thread_id, { limit: 100 });
  assert.equal(all.length, 13, "2 turns (6), a regenerated answer (1), an edit and a branch (3 each)");
  const two = await client.threads.getHistory(tt.thread_id, { limit: 2 });
  assert.deepEqual(two.map((s) => s.checkpoint.checkpoint_id), all.slice(0, 2).map((s) => s.checkpoint.checkpoint_id));
  const before = await client.threads.getHistory(tt.thread_id, { limit: 3, before: all[1].checkpoint });
  assert.deepEqual(before.map((s) => s.checkpoint.checkpoint_id), all.slice(2, 5).map((s) => s.checkpoint.checkpoint_id));
  const inputs = await client.threads.getHistory(tt.thread_id, { limit: 100, metadata: { source: "input" } });
  assert.ok(inputs.length > 0 && inputs.every((s) => s.metadata.source === "input"));
  assert.equal(inputs.length, all.filter((s) => s.metadata.source === "input").length);
  const one = await client.threads.getHistory(tt.thread_id, { checkpoint: { checkpoint_id: all[3].checkpoint.checkpoint_id } });
  assert.deepEqual(one.map((s) => s.checkpoint.checkpoint_id), [all[3].checkpoint.checkpoint_id]);
});

await step("updateState at a past checkpoint forks the thread", async () => {
  const history = await client.threads.getHistory(tt.thread_id, { limit: 100 });
  const target = history.find((s) => s.values.messages?.at(-1)?.content === "You said: hello");
  const res = await client.threads.updateState(tt.thread_id, { values: { note: "annotated" }, checkpoint: target.checkpoint });
  assert.ok(res.checkpoint.checkpoint_id);
  const state = await client.threads.getState(tt.thread_id);
  assert.equal(state.checkpoint.checkpoint_id, res.checkpoint.checkpoint_id);
  assert.equal(state.parent_checkpoint.checkpoint_id, target.checkpoint.checkpoint_id);
  assert.equal(state.values.note, "annotated");
  assert.deepEqual(state.values.messages.map((m) => m.content), ["hello", "You said: hello"]);
  const byId = await client.threads.updateState(tt.thread_id, { values: { note: "by id" }, checkpointId: target.checkpoint.checkpoint_id });
  assert.equal((await client.threads.getState(tt.thread_id, byId.checkpoint)).values.note, "by id");
});

await step("threads.create with supersteps: one checkpoint per superstep, __input__ as input", async () => {
  const t = await client.threads.create({
    graphId: "echo",
    supersteps: [
      { updates: [{ values: {}, asNode: "__input__" }] },
      { updates: [{ values: { messages: [human("prefilled"), { type: "ai", content: "You said: prefilled" }] }, asNode: "answer" }] },
      { updates: [{ values: { note: "a" }, asNode: "answer" }, { values: { messages: [human("both at once")] }, asNode: "answer" }] },
    ],
  });
  const history = await client.threads.getHistory(t.thread_id);
  assert.deepEqual(history.map((s) => [s.metadata.source, s.metadata.step]), [["update", 1], ["update", 0], ["input", -1]]);
  assert.equal(history[0].values.note, "a");
  assert.deepEqual(history[0].values.messages.map((m) => m.content), ["prefilled", "You said: prefilled", "both at once"]);
  const values = await client.runs.wait(t.thread_id, "echo", { input: { messages: [human("and now")] } });
  assert.equal(values.messages.at(-1).content, "You said: and now");
});

// ---- 4. continuing ----

await step("input null after interruptBefore continues from the checkpoint", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "echo", { input: { messages: [human("wait first")] }, interruptBefore: ["answer"] });
  assert.equal(first.messages.length, 1);
  let st = await client.threads.getState(t.thread_id);
  assert.deepEqual(st.next, ["answer"]);
  assert.equal((await client.threads.get(t.thread_id)).status, "interrupted");
  const done = await client.runs.wait(t.thread_id, "echo", { input: null });
  assert.equal(done.messages.at(-1).content, "You said: wait first");
  st = await client.threads.getState(t.thread_id);
  assert.deepEqual(st.next, []);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

await step("input null after updateState continues with the update", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "echo", { input: { messages: [human("draft")] }, interruptBefore: ["answer"] });
  const st = await client.threads.getState(t.thread_id);
  const draft = st.values.messages[0];
  await client.threads.updateState(t.thread_id, { values: { messages: [{ ...draft, content: "final" }] } });
  const done = await client.runs.wait(t.thread_id, "echo", { input: null });
  assert.deepEqual(done.messages.map((m) => m.content), ["final", "You said: final"]);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

await step("new input on a thread with a pending interrupt starts a new turn", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "approve", { input: {} });
  const again = await client.runs.wait(t.thread_id, "approve", { input: { messages: [human("never mind")] } });
  assert.equal(again.__error__, undefined);
  assert.equal(again.__interrupt__.length, 1);
  assert.notEqual(again.__interrupt__[0].id, first.__interrupt__[0].id);
  assert.equal(again.messages.at(-1).content, "never mind");
});

await step("command.resume as a map keyed by interrupt id", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "approve", { input: {} });
  const id = first.__interrupt__[0].id;
  const done = await client.runs.wait(t.thread_id, "approve", { command: { resume: { [id]: "yes" } } });
  assert.equal(done.approved, "yes");
  assert.equal(done.messages.at(-1).content, "Approved.");
});

await step("command.update and command.goto are applied", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "approve", { input: {} });
  const done = await client.runs.wait(t.thread_id, "approve", { command: { resume: "no", update: { messages: [human("overruled")] }, goto: "yes" } });
  const contents = done.messages.map((m) => m.content);
  assert.ok(contents.includes("overruled") && contents.includes("Approved.") && contents.includes("Declined."), `messages: ${contents}`);
  const echo = await client.threads.create();
  await client.runs.wait(echo.thread_id, "echo", { input: { messages: [human("x")] } });
  const jumped = await client.runs.wait(echo.thread_id, "echo", { command: { update: [["note", "pairs"]], goto: { node: "answer", input: null } } });
  assert.equal(jumped.note, "pairs");
  assert.equal(jumped.messages.length, 3, "answer ran again");
  await assert.rejects(client.runs.wait(echo.thread_id, "echo", { command: { goto: "nowhere" } }), /422|nowhere/);
});

await step("a plain cancel leaves the thread idle", async () => {
  const gate = process.env.GRAPHCTL_SERVERTEST_GATE;
  assert.ok(gate, "GRAPHCTL_SERVERTEST_GATE names the slow node's gate directory");
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "slow", { input: {} });
  for (let i = 0; i < 1000 && !existsSync(join(gate, `${t.thread_id}.started`)); i++) await sleep(10);
  await client.runs.cancel(t.thread_id, run.run_id, true);
  const rec = await client.runs.get(t.thread_id, run.run_id);
  assert.equal(rec.status, "interrupted");
  const th = await client.threads.get(t.thread_id);
  assert.equal(th.status, "idle");
  const st = await client.threads.getState(t.thread_id);
  assert.ok(st.tasks.every((task) => task.error == null), JSON.stringify(st.tasks));
});

// ---- 6. stream modes ----

await step("tasks and checkpoints stream modes, in LangGraph's shapes", async () => {
  const t = await client.threads.create();
  const chunks = await collect(
    client.runs.stream(t.thread_id, "echo", { input: { messages: [human("modes")] }, streamMode: ["tasks", "checkpoints"] }),
  );
  const tasks = chunks.filter((c) => c.event === "tasks").map((c) => c.data);
  const start = tasks.find((d) => "input" in d);
  const result = tasks.find((d) => "result" in d);
  assert.equal(start.name, "answer");
  assert.match(start.id, uuid);
  assert.deepEqual(start.input.messages.map((m) => m.content), ["modes"]);
  assert.ok(Array.isArray(start.triggers));
  assert.equal(result.id, start.id);
  assert.equal(result.error, null);
  assert.equal(result.result.messages[0].content, "You said: modes");
  const cps = chunks.filter((c) => c.event === "checkpoints").map((c) => c.data);
  assert.equal(cps.length, 3);
  assert.equal(cps[0].metadata.source, "input");
  assert.deepEqual(cps[0].next, ["__start__"]);
  assert.equal(cps[0].tasks[0].name, "__start__");
  assert.equal(cps[1].metadata.source, "loop");
  assert.deepEqual(cps[1].values.messages.map((m) => m.content), ["modes"]);
  assert.deepEqual(cps[1].next, ["answer"]);
  for (const i of [1, 2]) {
    assert.match(cps[i].config.configurable.checkpoint_id, uuid);
    assert.equal(cps[i].parent_config.configurable.checkpoint_id, cps[i - 1].config.configurable.checkpoint_id);
  }
  assert.deepEqual(cps[2].values.messages.map((m) => m.content), ["modes", "You said: modes"]);
  assert.deepEqual(cps[2].next, []);
});

await step("debug and events carry values", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: { messages: [human("dbg")] }, streamMode: ["debug", "events"] }));
  const debug = chunks.filter((c) => c.event === "debug").map((c) => c.data);
  assert.deepEqual([...new Set(debug.map((d) => d.type))].sort(), ["checkpoint", "task", "task_result"]);
  assert.equal(debug.find((d) => d.type === "task_result").payload.result.messages[0].content, "You said: dbg");
  assert.deepEqual(debug.filter((d) => d.type === "checkpoint").at(-1).payload.values.messages.map((m) => m.content), ["dbg", "You said: dbg"]);
  const events = chunks.filter((c) => c.event === "events").map((c) => c.data);
  const nodeEnd = events.find((e) => e.event === "on_chain_end" && e.name === "answer");
  assert.equal(nodeEnd.data.output.messages[0].content, "You said: dbg");
  const graphEnd = events.findLast((e) => e.event === "on_chain_end");
  assert.equal(graphEnd.name, "echo");
  assert.deepEqual(graphEnd.data.output.messages.map((m) => m.content), ["dbg", "You said: dbg"]);
  assert.equal(events.find((e) => e.event === "on_chain_start" && e.name === "answer").data.input.messages[0].content, "dbg");
});

await step("subgraphs: true is accepted", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: { messages: [human("sub")] }, streamMode: ["values"], streamSubgraphs: true }));
  assert.equal(chunks.filter((c) => c.event === "values").at(-1).data.messages.at(-1).content, "You said: sub");
});

await step("joinStream with lastEventId -1 replays the run", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "echo", { input: { messages: [human("replay")] }, streamMode: ["values"] });
  await client.runs.join(t.thread_id, run.run_id);
  const chunks = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
  const events = chunks.map((c) => c.event);
  assert.equal(events[0], "metadata");
  assert.ok(events.includes("values"), `events: ${events}`);
  assert.equal(chunks.filter((c) => c.event === "values").at(-1).data.messages.at(-1).content, "You said: replay");
});

console.log("all ok");
