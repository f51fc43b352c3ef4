// Static breakpoints (interruptBefore / interruptAfter) through the official
// @langchain/langgraph-sdk client, as LangGraph's Agent Server shows them:
// the stream's updates end with {"__interrupt__": []}, no values chunk and
// no /runs/wait output lists an interrupt, the thread is interrupted with
// its next tasks pending and no interrupts, and a run with null input (or a
// Command) goes on. node breakpoints.mjs http://127.0.0.1:PORT
// Graphs: review (write → check → publish replies), approve (an interrupt).
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { collect, step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node breakpoints.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });
const hi = (content) => ({ messages: [{ type: "human", content }] });
const contents = (values) => values.messages.map((m) => m.content);
const updates = (chunks) => chunks.filter((c) => c.event === "updates").map((c) => c.data);
const values = (chunks) => chunks.filter((c) => c.event === "values").map((c) => c.data);

// stopped asserts what LangGraph shows of a thread stopped at a breakpoint
// with next pending: interrupted, no interrupt anywhere, the next tasks
// with empty interrupts.
const stopped = async (threadId, next) => {
  const thread = await client.threads.get(threadId);
  assert.equal(thread.status, "interrupted");
  assert.deepEqual(thread.interrupts, {});
  const state = await client.threads.getState(threadId);
  assert.deepEqual(state.next, next);
  assert.deepEqual(state.interrupts ?? [], []);
  assert.deepEqual(
    state.tasks.map((t) => [t.name, t.interrupts, t.error]),
    next.map((n) => [n, [], null]),
  );
  return state;
};

// useStreamInterrupts is useStream's `interrupts` (SDK 2.0.0,
// react/stream.lgp): from the streamed values' __interrupt__, else, once
// the stream ended, from the thread head's tasks and next.
const useStreamInterrupts = (streamValues, threadHead) => {
  if (streamValues != null && Array.isArray(streamValues.__interrupt__)) {
    return streamValues.__interrupt__.length === 0 ? [{ when: "breakpoint" }] : streamValues.__interrupt__;
  }
  const all = (threadHead?.tasks ?? []).flatMap((t) => t.interrupts ?? []);
  if (all.length > 0) return all;
  if (!(threadHead?.next ?? []).length) return [];
  return [{ when: "breakpoint" }];
};

// streamedLikeUseStream folds a stream's values chunks as useStream's
// StreamManager does (SDK 2.0.0, ui/manager): a chunk with __interrupt__ is
// merged into the values held, any other replaces them.
const streamedLikeUseStream = (chunks) =>
  values(chunks).reduce((held, v) => ("__interrupt__" in v ? { ...held, ...v } : v), null);

await step("interruptBefore: updates end with an empty __interrupt__, values list none", async () => {
  const t = await client.threads.create();
  const chunks = await collect(
    client.runs.stream(t.thread_id, "review", { input: hi("ship it"), interruptBefore: ["check"], streamMode: ["values", "updates"] }),
  );
  assert.equal(chunks.filter((c) => c.event === "error").length, 0, JSON.stringify(chunks));
  const ups = updates(chunks);
  assert.deepEqual(ups.map((u) => Object.keys(u)), [["write"], ["__interrupt__"]]);
  assert.deepEqual(ups.at(-1), { __interrupt__: [] });
  const vals = values(chunks);
  assert.ok(vals.length > 0);
  for (const v of vals) assert.ok(!("__interrupt__" in v), JSON.stringify(v));
  assert.deepEqual(contents(vals.at(-1)), ["ship it", "Draft: ship it"]);
  // The stop writes no state of its own: the draft's state streams once.
  assert.equal(vals.filter((v) => (v.messages ?? []).length === 2).length, 1, JSON.stringify(vals));
  const run = (await client.runs.list(t.thread_id))[0];
  assert.equal(run.status, "success");
  await stopped(t.thread_id, ["check"]);
});

await step("a breakpoint is no interrupt in the history", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "review", { input: hi("h"), interruptBefore: ["check"] });
  const history = await client.threads.getHistory(t.thread_id);
  // As in LangGraph, the thread stops at the checkpoint of the step before.
  assert.deepEqual(history[0].metadata.source, "loop");
  assert.deepEqual(history[0].next, ["check"]);
  for (const s of history) {
    assert.deepEqual(s.interrupts ?? [], [], JSON.stringify(s));
    for (const task of s.tasks) assert.deepEqual(task.interrupts, [], JSON.stringify(task));
  }
});

await step("runs.wait at a breakpoint answers the values with no __interrupt__", async () => {
  const t = await client.threads.create();
  const out = await client.runs.wait(t.thread_id, "review", { input: hi("w"), interruptBefore: ["check"] });
  assert.ok(!("__interrupt__" in out), JSON.stringify(out));
  assert.deepEqual(contents(out), ["w", "Draft: w"]);
  // Joining the finished run answers the same.
  const run = (await client.runs.list(t.thread_id))[0];
  const joined = await client.runs.join(t.thread_id, run.run_id);
  assert.ok(!("__interrupt__" in joined), JSON.stringify(joined));
});

await step("input null goes on from the breakpoint to the end", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "review", { input: hi("go"), interruptBefore: ["check"] });
  const chunks = await collect(client.runs.stream(t.thread_id, "review", { input: null, streamMode: ["values", "updates"] }));
  assert.deepEqual(updates(chunks).map((u) => Object.keys(u)), [["check"], ["publish"]]);
  assert.deepEqual(contents(values(chunks).at(-1)), ["go", "Draft: go", "Checked.", "Published."]);
  const thread = await client.threads.get(t.thread_id);
  assert.equal(thread.status, "idle");
  assert.deepEqual(thread.interrupts, {});
  assert.deepEqual((await client.threads.getState(t.thread_id)).next, []);
});

await step("a run that goes on with the same breakpoints stops at the next one", async () => {
  const t = await client.threads.create();
  const stops = { interruptBefore: ["check", "publish"] };
  await client.runs.wait(t.thread_id, "review", { input: hi("twice"), ...stops });
  await stopped(t.thread_id, ["check"]);
  const out = await client.runs.wait(t.thread_id, "review", { input: null, ...stops });
  assert.deepEqual(contents(out), ["twice", "Draft: twice", "Checked."]);
  await stopped(t.thread_id, ["publish"]);
  const done = await client.runs.wait(t.thread_id, "review", { input: null, ...stops });
  assert.equal(done.messages.at(-1).content, "Published.");
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

await step("Command resume goes on from a breakpoint", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "review", { input: hi("cmd"), interruptBefore: ["publish"] });
  await stopped(t.thread_id, ["publish"]);
  const out = await client.runs.wait(t.thread_id, "review", { command: { resume: "go on" } });
  assert.ok(!("__error__" in out), JSON.stringify(out));
  assert.equal(out.messages.at(-1).content, "Published.");
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

await step("interruptAfter: stopped after the node, its successor next", async () => {
  const t = await client.threads.create();
  const chunks = await collect(
    client.runs.stream(t.thread_id, "review", { input: hi("after"), interruptAfter: ["write"], streamMode: ["updates"] }),
  );
  assert.deepEqual(updates(chunks), [updates(chunks)[0], { __interrupt__: [] }]);
  assert.deepEqual(Object.keys(updates(chunks)[0]), ["write"]);
  await stopped(t.thread_id, ["check"]);
  const out = await client.runs.wait(t.thread_id, "review", { input: null });
  assert.deepEqual(contents(out), ["after", "Draft: after", "Checked.", "Published."]);
});

await step("updateState at a breakpoint keeps the thread stopped; input null goes on with the update", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "review", { input: hi("draft"), interruptBefore: ["check"] });
  const st = await client.threads.getState(t.thread_id);
  const draft = st.values.messages.at(-1);
  await client.threads.updateState(t.thread_id, { values: { messages: [{ ...draft, content: "Draft: edited" }] } });
  await stopped(t.thread_id, ["check"]);
  const out = await client.runs.wait(t.thread_id, "review", { input: null });
  assert.deepEqual(contents(out), ["draft", "Draft: edited", "Checked.", "Published."]);
});

await step("useStream: the stream keeps the state and interrupts says breakpoint", async () => {
  const t = await client.threads.create();
  const streamed = streamedLikeUseStream(
    await collect(
      client.runs.stream(t.thread_id, "review", {
        input: hi("ui"),
        interruptBefore: ["check"],
        streamMode: ["values", "updates", "messages-tuple"],
      }),
    ),
  );
  assert.deepEqual(contents(streamed), ["ui", "Draft: ui"]);
  const head = await client.threads.getState(t.thread_id);
  assert.deepEqual(useStreamInterrupts(streamed, head), [{ when: "breakpoint" }]);
  // Once the thread went on, useStream shows no interrupt.
  const after = streamedLikeUseStream(await collect(client.runs.stream(t.thread_id, "review", { input: null, streamMode: ["values"] })));
  assert.equal(after.messages.at(-1).content, "Published.");
  assert.deepEqual(useStreamInterrupts(after, await client.threads.getState(t.thread_id)), []);
});

await step("a breakpoint before an interrupt node, then the interrupt itself", async () => {
  const t = await client.threads.create();
  const out = await client.runs.wait(t.thread_id, "approve", { input: {}, interruptBefore: ["ask"] });
  assert.ok(!("__interrupt__" in out), JSON.stringify(out));
  await stopped(t.thread_id, ["ask"]);
  // Going on, the node asks: now there is an interrupt to answer.
  const asked = await client.runs.wait(t.thread_id, "approve", { input: null, interruptBefore: ["ask"] });
  assert.equal(asked.__interrupt__.length, 1, JSON.stringify(asked));
  const thread = await client.threads.get(t.thread_id);
  assert.equal(thread.status, "interrupted");
  const ids = Object.values(thread.interrupts).flat().map((i) => i.id);
  assert.deepEqual(ids, [asked.__interrupt__[0].id]);
  const state = await client.threads.getState(t.thread_id);
  assert.equal(state.tasks[0].interrupts[0].id, asked.__interrupt__[0].id);
  assert.deepEqual(useStreamInterrupts(null, state).map((i) => i.id), [asked.__interrupt__[0].id]);
  const done = await client.runs.wait(t.thread_id, "approve", { command: { resume: "yes" } });
  assert.equal(done.messages.at(-1).content, "Approved.");
});
