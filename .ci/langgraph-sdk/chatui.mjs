// The requests agent-chat-ui (useStream) sends, through the official
// @langchain/langgraph-sdk client, and what its screen relies on in the
// answers: node chatui.mjs http://127.0.0.1:PORT
// Graphs: echo (one reply node), approve (an interrupt, then a reply).
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { collect, step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node chatui.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });

// The options agent-chat-ui's submit passes (streamMode "values" plus what
// useStream adds for its callbacks).
const submitOptions = {
  streamMode: ["values", "messages-tuple", "custom"],
  streamSubgraphs: true,
  streamResumable: true,
  onDisconnect: "continue",
};
const human = (id, text) => ({ id, type: "human", content: [{ type: "text", text }] });
const ids = (values) => (values.messages ?? []).map((m) => m.id);
const valuesFrames = (chunks) => chunks.filter((c) => c.event === "values").map((c) => c.data);
// firstSeen is useStream's firstSeenState: the oldest state holding the message.
const firstSeen = (history, id) => history.findLast((s) => (s.values.messages ?? []).some((m) => m.id === id));

let thread;
await step("the first values frame of a run holds the message just sent, as the screen keeps showing it", async () => {
  thread = await client.threads.create({ metadata: {} });
  const chunks = await collect(client.runs.stream(thread.thread_id, "echo", { input: { messages: [human("h1", "one")] }, ...submitOptions }));
  const frames = valuesFrames(chunks);
  assert.ok(frames.length >= 2, `values frames: ${JSON.stringify(frames)}`);
  assert.deepEqual(ids(frames[0]), ["h1"], `first values frame: ${JSON.stringify(frames[0])}`);
  assert.equal(frames.at(-1).messages.length, 2);
});

await step("on a thread with messages, the first frame is the earlier messages and the new one", async () => {
  const before = await client.threads.getState(thread.thread_id);
  const chunks = await collect(client.runs.stream(thread.thread_id, "echo", { input: { messages: [human("h2", "two")] }, ...submitOptions }));
  const frames = valuesFrames(chunks);
  assert.deepEqual(ids(frames[0]), [...ids(before.values), "h2"], `first values frame: ${JSON.stringify(frames[0])}`);
  for (const f of frames) assert.ok(ids(f).includes("h2"), `a values frame without the sent message: ${JSON.stringify(f)}`);
});

await step("regenerating an answer from its parent checkpoint starts with the answer gone", async () => {
  const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
  const answer = history[0].values.messages.at(-1);
  assert.equal(answer.type, "ai");
  const parent = firstSeen(history, answer.id).parent_checkpoint;
  assert.ok(parent?.checkpoint_id, "the answer's first state has no parent checkpoint");
  const chunks = await collect(client.runs.stream(thread.thread_id, "echo", { checkpoint: parent, ...submitOptions }));
  const frames = valuesFrames(chunks);
  assert.ok(frames.length >= 2, `values frames: ${JSON.stringify(frames)}`);
  assert.ok(!ids(frames[0]).includes(answer.id), `the first frame still holds the old answer: ${JSON.stringify(frames[0])}`);
  assert.equal(ids(frames[0]).at(-1), "h2");
  const last = frames.at(-1).messages;
  assert.equal(last.length, 4);
  assert.notEqual(last.at(-1).id, answer.id, "the regenerated answer kept the old id");
});

await step("editing a message from its parent checkpoint starts with the edited message in place of the old one", async () => {
  const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
  const parent = firstSeen(history, "h2").parent_checkpoint;
  const edited = { type: "human", content: "two, edited" };
  const chunks = await collect(client.runs.stream(thread.thread_id, "echo", { input: { messages: [edited] }, checkpoint: parent, ...submitOptions }));
  const frames = valuesFrames(chunks);
  const first = frames[0].messages;
  assert.ok(!first.some((m) => m.id === "h2"), `the first frame still holds the old message: ${JSON.stringify(first)}`);
  assert.equal(first.at(-1).content, "two, edited");
  assert.equal(first.length, 3);
  assert.equal(frames.at(-1).messages.length, 4);
});

// useStream's submit({}, {command}) sends input {} beside the command, as
// agent-chat-ui's interrupt view does to answer and to mark a thread resolved.
const interrupted = async (text) => {
  const t = await client.threads.create({ metadata: {} });
  const chunks = await collect(client.runs.stream(t.thread_id, "approve", { input: { messages: [human(text, text)] }, ...submitOptions }));
  assert.ok(valuesFrames(chunks).at(-1).__interrupt__?.length, `no interrupt: ${JSON.stringify(chunks)}`);
  return t;
};

await step("an answer sent as a command beside input {} resumes the interrupt", async () => {
  const t = await interrupted("r1");
  const chunks = await collect(client.runs.stream(t.thread_id, "approve", { input: {}, command: { resume: "yes" }, ...submitOptions }));
  const last = valuesFrames(chunks).at(-1);
  assert.equal(last.approved, "yes");
  assert.deepEqual(last.messages.map((m) => m.content), [[{ type: "text", text: "r1" }], "Approved."]);
});

await step("Mark as Resolved (command goto __end__) ends the thread where it stands", async () => {
  const t = await interrupted("r2");
  const before = await client.threads.getState(t.thread_id);
  const chunks = await collect(client.runs.stream(t.thread_id, "approve", { input: {}, command: { goto: "__end__" }, ...submitOptions }));
  assert.ok(!chunks.some((c) => c.event === "error"), `error frames: ${JSON.stringify(chunks)}`);
  const after = await client.threads.getState(t.thread_id);
  assert.deepEqual(after.next, []);
  assert.deepEqual(after.tasks, []);
  assert.deepEqual(after.values.messages, before.values.messages);
  const thread = await client.threads.get(t.thread_id);
  assert.equal(thread.status, "idle");
  assert.deepEqual(thread.interrupts, {});
  const runs = await client.runs.list(t.thread_id);
  assert.equal(runs[0].status, "success");
});

await step("a command's update goes in before the thread ends at __end__", async () => {
  const t = await interrupted("r3");
  await client.runs.wait(t.thread_id, "approve", { command: { update: { approved: "no" }, goto: ["__end__"] } });
  const after = await client.threads.getState(t.thread_id);
  assert.equal(after.values.approved, "no");
  assert.deepEqual(after.next, []);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

await step("a command's goto beside input {} goes on from where the thread stands, starting no new turn", async () => {
  const t = await interrupted("r4");
  const chunks = await collect(client.runs.stream(t.thread_id, "approve", { input: {}, command: { goto: "no" }, ...submitOptions }));
  const last = valuesFrames(chunks).at(-1);
  assert.equal(last.__interrupt__, undefined, `interrupted again: ${JSON.stringify(last)}`);
  assert.deepEqual(last.messages.map((m) => m.content), [[{ type: "text", text: "r4" }], "Declined."]);
  const history = await client.threads.getHistory(t.thread_id);
  assert.equal(history.filter((s) => s.metadata.source === "input").length, 1, "the command started a new turn");
});
