// Subgraphs over the Agent Server API through the official
// @langchain/langgraph-sdk client: node subgraphs.mjs http://127.0.0.1:PORT
// Graph: research (examples/subgraph): a map over a researcher subgraph (one
// child per topic), then a reviewer subgraph that asks for approval (an
// interrupt inside a child). Then time travel with the reviewer: updateState
// with its checkpoint config, a replay from before it, a fork of a checkpoint
// that waits inside it, and the refusal of a run from its checkpoint.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { collect, step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node subgraphs.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });
const thread = await client.threads.create();
const report = "bees: 2 notes on bees; ants: 2 notes on ants";

// namespaced returns the chunks of an event type from subgraphs, by namespace.
const namespaced = (chunks, type) => {
  const out = {};
  for (const c of chunks) {
    const [event, ...ns] = c.event.split("|");
    if (event !== type || ns.length === 0) continue;
    (out[ns.join("|")] ??= []).push(c.data);
  }
  return out;
};

await step("getSubgraphs lists the subgraph nodes with their graphs' schemas", async () => {
  const subgraphs = await client.assistants.getSubgraphs("research");
  assert.deepEqual(Object.keys(subgraphs).sort(), ["research", "review"]);
  assert.equal(subgraphs.research.graph_id, "researcher");
  assert.deepEqual(Object.keys(subgraphs.review.state_schema.properties).sort(), ["decision", "report", "verdict"]);
  // A namespace names one subgraph, as LangGraph's get_subgraphs(namespace=...).
  const one = await client.assistants.getSubgraphs("research", { namespace: "review" });
  assert.deepEqual(one, { review: subgraphs.review });
  assert.deepEqual(await client.assistants.getSubgraphs("research", { namespace: "nope" }), {});
});

// A subgraph's namespace is "node:<task id>", new for each run of the node.
const nsPattern = (node) => new RegExp(`^${node}:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);

let interruptID, reviewNS, antsNS;
await step("streamSubgraphs: the children's updates come under their namespaces, then the run stops inside the reviewer", async () => {
  const chunks = await collect(
    client.runs.stream(thread.thread_id, "research", {
      input: { topics: ["bees", "ants"] },
      streamMode: ["updates", "values"],
      streamSubgraphs: true,
    }),
  );
  assert.deepEqual(chunks.filter((c) => c.event === "error"), [], "the run failed");
  const updates = namespaced(chunks, "updates");
  const names = Object.keys(updates);
  const research = names.filter((ns) => nsPattern("research").test(ns));
  reviewNS = names.find((ns) => nsPattern("review").test(ns));
  assert.equal(research.length, 2, JSON.stringify(names));
  assert.equal(names.length, 3, JSON.stringify(names));
  const summary = (ns) => updates[ns][1]?.summarize?.summary;
  antsNS = research.find((ns) => summary(ns) === "2 notes on ants");
  const beesNS = research.find((ns) => summary(ns) === "2 notes on bees");
  assert.ok(antsNS && beesNS, JSON.stringify(updates));
  assert.deepEqual(updates[antsNS].map((u) => Object.keys(u)[0]), ["gather", "summarize"]);
  const childValues = namespaced(chunks, "values")[reviewNS];
  assert.equal(childValues.at(-1).report, report);
  // The parent's own updates carry no namespace.
  const parent = chunks.filter((c) => c.event === "updates").map((c) => Object.keys(c.data)[0]);
  assert.ok(parent.includes("compile") && parent.includes("__interrupt__"), JSON.stringify(parent));
  const last = chunks.filter((c) => c.event === "values").at(-1).data;
  const interrupts = last.__interrupt__;
  assert.equal(interrupts.length, 1);
  assert.deepEqual(interrupts[0].ns, [reviewNS]);
  assert.match(interrupts[0].value.message, /^Approve this report\?/);
  interruptID = interrupts[0].id;
});

await step("getState with subgraphs shows the reviewer's state inside the parent's pending task", async () => {
  const state = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
  assert.deepEqual(state.next, ["review"]);
  assert.equal(state.tasks.length, 1);
  const task = state.tasks[0];
  assert.equal(task.name, "review");
  assert.equal(task.interrupts[0].id, interruptID);
  assert.equal(task.state.values.report, report);
  assert.equal(task.state.values.verdict, "");
  assert.deepEqual(task.state.next, ["ask"]);
  assert.equal(task.state.checkpoint.checkpoint_ns, reviewNS);
  assert.equal(task.state.checkpoint.thread_id, thread.thread_id);
  // Without subgraphs the task names the child's checkpoints.
  const plain = await client.threads.getState(thread.thread_id);
  assert.deepEqual(plain.tasks[0].state, { configurable: { thread_id: thread.thread_id, checkpoint_ns: reviewNS } });
  // A checkpoint config with the namespace reads the child's state itself.
  const child = await client.threads.getState(thread.thread_id, { checkpoint_ns: reviewNS });
  assert.equal(child.values.report, report);
  assert.equal(child.interrupts[0].id, interruptID);
  // The history of one researcher child: its input, its start, gather and summarize.
  const history = await client.threads.getHistory(thread.thread_id, {
    checkpoint: { checkpoint_ns: antsNS },
  });
  assert.deepEqual(history.map((h) => h.metadata.source), ["loop", "loop", "loop", "input"]);
  assert.equal(history[0].values.summary, "2 notes on ants");
  assert.ok(history.every((h) => h.checkpoint.checkpoint_ns === antsNS));
});

await step("resume from the parent thread goes on inside the reviewer and back to the parent", async () => {
  const chunks = await collect(
    client.runs.stream(thread.thread_id, "research", {
      command: { resume: "approve" },
      streamMode: ["updates"],
      streamSubgraphs: true,
    }),
  );
  assert.deepEqual(chunks.filter((c) => c.event === "error"), [], "the run failed");
  // The answer is the interrupted node's update inside the child, then the
  // child goes on, in the namespace it stopped in.
  assert.deepEqual(namespaced(chunks, "updates")[reviewNS], [
    { ask: { decision: "approve" } },
    { decide: { verdict: "Approved" } },
  ]);
  const state = await client.threads.getState(thread.thread_id);
  assert.equal(state.values.verdict, "Approved");
  assert.deepEqual(state.next, []);
  assert.equal(state.values.messages.at(-1).content, `Approved: ${report}`);
});

await step("a second run on the thread starts each child afresh, in namespaces of its own", async () => {
  const chunks = await collect(
    client.runs.stream(thread.thread_id, "research", {
      input: { topics: ["ants"] },
      streamMode: ["updates", "values"],
      streamSubgraphs: true,
    }),
  );
  assert.deepEqual(chunks.filter((c) => c.event === "error"), [], "the run failed");
  const names = Object.keys(namespaced(chunks, "updates"));
  assert.equal(names.length, 2, JSON.stringify(names));
  assert.ok(!names.includes(antsNS) && !names.includes(reviewNS), JSON.stringify(names));
  // The researcher child gathered two notes, not two more on top of the
  // first run's.
  const last = chunks.filter((c) => c.event === "values").at(-1).data;
  assert.deepEqual(last.findings.at(-1), { topic: "ants", summary: "2 notes on ants", sources: 2 });
  assert.equal(last.__interrupt__.length, 1);
});

await step("without streamSubgraphs no child event reaches the stream", async () => {
  const other = await client.threads.create();
  const chunks = await collect(
    client.runs.stream(other.thread_id, "research", { input: { topics: ["owls"] }, streamMode: ["updates", "values"] }),
  );
  assert.deepEqual(chunks.filter((c) => c.event.includes("|")), []);
  assert.ok(chunks.some((c) => c.event === "updates" && c.data.research), "the subgraph node's own update");
});

await step("getGraph with xray draws each subgraph's nodes in place of its node", async () => {
  const plain = await client.assistants.getGraph("research");
  assert.ok(plain.nodes.some((n) => n.id === "research") && !plain.nodes.some((n) => n.id.includes(":")));
  const drawn = await client.assistants.getGraph("research", { xray: true });
  const ids = drawn.nodes.map((n) => n.id);
  for (const id of ["research:gather", "research:summarize", "review:ask", "review:decide"]) assert.ok(ids.includes(id), `${id} in ${ids}`);
  assert.ok(!ids.includes("research") && !ids.includes("review"), `${ids}`);
  const edge = (s, t) => drawn.edges.some((e) => e.source === s && e.target === t);
  assert.ok(edge("plan", "research:gather"), JSON.stringify(drawn.edges));
  assert.ok(edge("research:gather", "research:summarize"), JSON.stringify(drawn.edges));
  assert.ok(edge("research:summarize", "compile"), JSON.stringify(drawn.edges));
  assert.ok(edge("compile", "review:ask") && edge("review:decide", "answer"), JSON.stringify(drawn.edges));
  assert.deepEqual(await client.assistants.getGraph("research", { xray: 1 }), drawn);
  assert.deepEqual(await client.assistants.getGraph("research", { xray: false }), plain);
  await assert.rejects(client.assistants.getGraph("research", { xray: "deep" }), (err) => err.status === 422);
});

// Time travel with subgraphs, as LangGraph's replay, fork and update_state
// with a subgraph's checkpoint config.
const reviewed = async (topics) => {
  const t = await client.threads.create();
  const values = await client.runs.wait(t.thread_id, "research", { input: { topics } });
  assert.equal(values.__interrupt__.length, 1, JSON.stringify(values));
  return { thread: t.thread_id, ns: values.__interrupt__[0].ns[0] };
};

await step("updateState with the reviewer's checkpoint config changes the waiting subgraph, and the parent goes on from it", async () => {
  const { thread, ns } = await reviewed(["owls"]);
  const state = await client.threads.getState(thread, undefined, { subgraphs: true });
  const childConfig = state.tasks[0].state.checkpoint;
  assert.equal(childConfig.checkpoint_ns, ns);
  const updated = await client.threads.updateState(thread, { values: { report: "owls: edited" }, checkpoint: childConfig });
  assert.equal(updated.checkpoint.checkpoint_ns, ns);
  assert.notEqual(updated.checkpoint.checkpoint_id, childConfig.checkpoint_id);
  const child = await client.threads.getState(thread, { checkpoint_ns: ns });
  assert.equal(child.values.report, "owls: edited");
  assert.deepEqual(child.next, ["ask"]);
  const done = await client.runs.wait(thread, "research", { command: { resume: "approve" } });
  assert.equal(done.messages.at(-1).content, "Approved: owls: edited");
});

await step("a replay from the checkpoint before the reviewer runs it afresh, in a namespace of its own", async () => {
  const { thread, ns } = await reviewed(["owls"]);
  await client.runs.wait(thread, "research", { command: { resume: "approve" } });
  const history = await client.threads.getHistory(thread, { limit: 50 });
  const before = history.find((h) => h.next.length === 1 && h.next[0] === "review" && h.metadata.source === "loop" && h.tasks[0].interrupts.length === 0);
  assert.ok(before, JSON.stringify(history.map((h) => [h.next, h.metadata.source])));
  const replay = await client.runs.wait(thread, "research", { input: null, checkpoint: before.checkpoint });
  assert.equal(replay.__interrupt__?.length, 1, JSON.stringify(replay));
  assert.ok(nsPattern("review").test(replay.__interrupt__[0].ns[0]) && replay.__interrupt__[0].ns[0] !== ns, replay.__interrupt__[0].ns[0]);
  const done = await client.runs.wait(thread, "research", { command: { resume: "reject" } });
  assert.equal(done.verdict, "Rejected");
});

await step("a fork of the checkpoint that waits in the reviewer resumes the reviewer where it was", async () => {
  const { thread, ns } = await reviewed(["owls"]);
  const waiting = (await client.threads.getState(thread)).checkpoint;
  await client.runs.wait(thread, "research", { command: { resume: "approve" } });
  await client.threads.updateState(thread, { values: { topics: ["owls", "bats"] }, checkpoint: waiting });
  const forked = await client.threads.getState(thread, undefined, { subgraphs: true });
  assert.deepEqual(forked.values.topics, ["owls", "bats"]);
  const task = forked.tasks[0];
  assert.ok(task.state.checkpoint.checkpoint_ns !== ns && nsPattern("review").test(task.state.checkpoint.checkpoint_ns), JSON.stringify(task.state.checkpoint));
  assert.deepEqual(task.state.next, ["ask"]);
  const done = await client.runs.wait(thread, "research", { command: { resume: "reject" } });
  assert.equal(done.verdict, "Rejected");
  // The first branch's reviewer keeps its own answer.
  const first = await client.threads.getState(thread, { checkpoint_ns: ns });
  assert.equal(first.values.verdict, "Approved");
});

await step("a run from a subgraph's checkpoint is refused (422), naming the checkpoint and namespace", async () => {
  const { thread, ns } = await reviewed(["owls"]);
  const child = await client.threads.getState(thread, { checkpoint_ns: ns });
  await assert.rejects(
    client.runs.wait(thread, "research", { input: null, checkpoint: child.checkpoint }),
    (err) => err.status === 422 && err.message.includes(ns) && err.message.includes(child.checkpoint.checkpoint_id) && err.message.includes("a run starts from a checkpoint of the thread itself"),
  );
});
