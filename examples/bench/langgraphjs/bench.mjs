// The graphctl bench scenarios in LangGraph.js: a loop of super-steps, a long
// chat on one thread, and a fan-out with a join — the same three graphs as
// `graphctl bench` runs — measured with MemorySaver and, when installed,
// SqliteSaver (a file on disk). Prints one JSON object per figure, in the
// form `graphctl bench --langgraphjs DIR` reads:
//   node bench.mjs [--loop-steps N] [--chat-turns N] [--fanout N] [--runs N] [--dir DIR]
import { Annotation, END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { mkdtempSync, statSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const loopSteps = Number(args["loop-steps"] ?? 1000);
const chatTurns = Number(args["chat-turns"] ?? 1000);
const fanOut = Number(args["fanout"] ?? 100);
const runs = Number(args["runs"] ?? 5);
const dir = args["dir"] ?? mkdtempSync(join(tmpdir(), "lgjs-bench-"));

const report = (scenario, metric, value, unit) => console.log(JSON.stringify({ scenario, metric, value, unit }));

let SqliteSaver = null;
try {
  ({ SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite"));
  SqliteSaver.fromConnString(":memory:"); // fails when better-sqlite3's native module is missing
} catch (err) {
  SqliteSaver = null;
  report("note", `SqliteSaver unavailable (${String(err.message).split("\n")[0]}): durable figures skipped`, 0, "");
}

const savers = [["memory", () => new MemorySaver()]];
if (SqliteSaver) savers.push(["sqlite", (name) => SqliteSaver.fromConnString(join(dir, `${name}.sqlite`))]);

// Loop: one node that increments a counter and loops back until it ran loopSteps times.
const LoopState = Annotation.Root({ count: Annotation({ reducer: (_, b) => b, default: () => 0 }) });
for (const [name, saver] of savers) {
  const graph = new StateGraph(LoopState)
    .addNode("inc", (s) => ({ count: s.count + 1 }))
    .addEdge(START, "inc")
    .addConditionalEdges("inc", (s) => (s.count < loopSteps ? "inc" : END))
    .compile({ checkpointer: saver("loop") });
  let best = Infinity;
  const n = name === "sqlite" ? 1 : runs;
  for (let i = 0; i <= n; i++) {
    const start = performance.now();
    const out = await graph.invoke({ count: 0 }, { configurable: { thread_id: `loop-${i}` }, recursionLimit: loopSteps + 10 });
    if (out.count !== loopSteps) throw new Error(`loop ran ${out.count} steps`);
    const ms = performance.now() - start;
    if (i > 0) best = Math.min(best, ms);
  }
  report("loop", `per super-step, ${name}`, (best * 1000) / loopSteps, "µs");
}

// Chat: every user message gets one assistant message; a second node counts turns.
const ChatState = Annotation.Root({
  ...MessagesAnnotation.spec,
  turns: Annotation({ reducer: (a, b) => a + b, default: () => 0 }),
});
for (const [name, saver] of savers) {
  const graph = new StateGraph(ChatState)
    .addNode("answer", (s) => ({ messages: [new AIMessage(`Answer number ${s.turns + 1}: noted, thank you for the details you gave.`)] }))
    .addNode("count", () => ({ turns: 1 }))
    .addEdge(START, "answer")
    .addEdge("answer", "count")
    .addEdge("count", END)
    .compile({ checkpointer: saver("chat") });
  const window = Math.max(Math.floor(chatTurns / 100), 5);
  const lateFrom = Math.floor((chatTurns * 2) / 5);
  let first = 0, late = 0, final;
  for (let turn = 1; turn <= chatTurns; turn++) {
    const start = performance.now();
    final = await graph.invoke(
      { messages: [new HumanMessage(`Turn ${turn}: here is one more detail about my order and its delivery.`)] },
      { configurable: { thread_id: "chat" } },
    );
    const ms = performance.now() - start;
    if (turn > 1 && turn <= 1 + window) first += ms;
    if (turn > lateFrom && turn <= lateFrom + window) late += ms;
  }
  report("chat", `per turn, turns 2-${1 + window}, ${name}`, (first * 1000) / window, "µs");
  report("chat", `per turn, turns ${lateFrom + 1}-${lateFrom + window}, ${name}`, (late * 1000) / window, "µs");
  if (name === "sqlite") {
    const size = readdirSync(dir).filter((f) => f.startsWith("chat.sqlite")).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    const state = JSON.stringify({ messages: final.messages.map((m) => ({ type: m._getType(), content: m.content, id: m.id })), turns: final.turns });
    report("chat", "on disk / final state, sqlite", size / state.length, "×");
  }
}

// Fan-out: one task per item (Send), results gathered by a concatenating reducer, then a join.
const FanState = Annotation.Root({
  items: Annotation({ reducer: (_, b) => b, default: () => [] }),
  results: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  total: Annotation({ reducer: (_, b) => b, default: () => 0 }),
});
for (const [name, saver] of savers) {
  const graph = new StateGraph(FanState)
    .addNode("work", (s) => ({ results: [s.item * 2] }))
    .addNode("join", (s) => ({ total: s.results.length }))
    .addConditionalEdges(START, (s) => s.items.map((item) => new Send("work", { item })))
    .addEdge("work", "join")
    .addEdge("join", END)
    .compile({ checkpointer: saver("fanout") });
  const items = Array.from({ length: fanOut }, (_, i) => i);
  const n = name === "sqlite" ? Math.max(2, Math.floor(runs / 2)) : runs * 4;
  let total = 0;
  for (let i = 0; i <= n; i++) {
    const start = performance.now();
    const out = await graph.invoke({ items }, { configurable: { thread_id: `fan-${i}` } });
    if (out.total !== fanOut) throw new Error(`fan-out joined ${out.total} results`);
    if (i > 0) total += performance.now() - start;
  }
  report("fan-out", `per run of ${fanOut} tasks + join, ${name}`, total / n, "ms");
}

if (!args["dir"]) rmSync(dir, { recursive: true, force: true });
