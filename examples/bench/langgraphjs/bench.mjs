// The graphctl bench scenarios in LangGraph.js: a loop of super-steps, a long
// chat on one thread, and a fan-out with a join — the same three graphs as
// `graphctl bench` runs — measured with MemorySaver and with SqliteSaver on a
// database file, in wall-clock time and in CPU time (process.cpuUsage: user
// and system time of all the process's threads, as graphctl counts its own).
// Prints one JSON object per line, in the form
// `graphctl bench --langgraphjs DIR` reads:
//   {"scenario": "loop", "metric": "per super-step, sqlite", "value": 812.5, "unit": "µs"}
//   {"note": "…"}   what was measured: versions, and the durability of SqliteSaver's commits
//
//   node bench.mjs [--loop-steps N] [--chat-turns N] [--fanout N] [--runs N] [--dir DIR]
import { Annotation, END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const size = (name, def) => {
  const v = Number(args[name] ?? def);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} ${args[name]}: want a positive integer`);
  return v;
};
const loopSteps = size("loop-steps", 1000);
const chatTurns = size("chat-turns", 1000);
const fanOut = size("fanout", 100);
const runs = size("runs", 5);
const dir = args["dir"] ?? mkdtempSync(join(tmpdir(), "lgjs-bench-"));

const report = (scenario, metric, value, unit) => console.log(JSON.stringify({ scenario, metric, value, unit }));
const note = (text) => console.log(JSON.stringify({ note: text }));
// cpu is the CPU time the process has used so far, in µs.
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const here = dirname(fileURLToPath(import.meta.url));
const version = (pkg) => {
  try {
    return JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
};

// A SqliteSaver on its own database file. SqliteSaver.setup (run on first
// use) switches the file to journal_mode=WAL; synchronous is better-sqlite3's
// build default, which the durability note reads back.
const openSqlite = (name) => {
  const saver = SqliteSaver.fromConnString(join(dir, `${name}.sqlite`));
  saver.setup();
  return saver;
};
const savers = [
  ["memory", () => new MemorySaver(), () => {}],
  ["sqlite", openSqlite, (saver) => saver.db.close()],
];

{
  const probe = openSqlite("probe");
  const journal = probe.db.pragma("journal_mode", { simple: true });
  const sync = probe.db.pragma("synchronous", { simple: true });
  const sqliteVersion = probe.db.prepare("select sqlite_version() as v").get().v;
  probe.db.close();
  const syncNames = { 0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA" };
  const durability =
    String(journal).toLowerCase() === "wal" && sync === 1
      ? "a commit is in the WAL file when it returns (it survives a killed process) but is fsynced only when SQLite checkpoints the WAL (it may be lost to a power cut)"
      : sync >= 2
        ? "every commit is fsynced before it returns"
        : "commits are not fsynced";
  note(
    `LangGraph.js: @langchain/langgraph ${version("@langchain/langgraph")}, Node.js ${process.version}; ` +
      `sqlite = SqliteSaver (@langchain/langgraph-checkpoint-sqlite ${version("@langchain/langgraph-checkpoint-sqlite")}, ` +
      `better-sqlite3 ${version("better-sqlite3")}, SQLite ${sqliteVersion}) on a file, journal_mode=${journal}, ` +
      `synchronous=${syncNames[sync] ?? sync}: ${durability}; graphs run with LangGraph's default durability ("async")`,
  );
}

// Loop: one node that increments a counter and loops back until it ran loopSteps times.
const LoopState = Annotation.Root({ count: Annotation({ reducer: (_, b) => b, default: () => 0 }) });
for (const [name, open, close] of savers) {
  const saver = open("loop");
  const graph = new StateGraph(LoopState)
    .addNode("inc", (s) => ({ count: s.count + 1 }))
    .addEdge(START, "inc")
    .addConditionalEdges("inc", (s) => (s.count < loopSteps ? "inc" : END))
    .compile({ checkpointer: saver });
  let best = Infinity;
  let cpuStart = 0;
  const n = name === "sqlite" ? 1 : runs;
  for (let i = 0; i <= n; i++) {
    // the first run warms up
    if (i === 1) cpuStart = cpu();
    const start = performance.now();
    const out = await graph.invoke({ count: 0 }, { configurable: { thread_id: `loop-${i}` }, recursionLimit: loopSteps + 10 });
    if (out.count !== loopSteps) throw new Error(`loop on ${name} ran ${out.count} steps, want ${loopSteps}`);
    const ms = performance.now() - start;
    if (i > 0) best = Math.min(best, ms);
  }
  const cpuUsed = cpu() - cpuStart;
  close(saver);
  report("loop", `per super-step, ${name}`, (best * 1000) / loopSteps, "µs");
  report("loop", `CPU per super-step (mean), ${name}`, cpuUsed / (n * loopSteps), "µs");
}

// The space files take on disk, as du counts it (allocated blocks).
const onDisk = (prefix) =>
  readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .reduce((n, f) => n + statSync(join(dir, f)).blocks * 512, 0);

// Chat: every user message gets one assistant message; a second node counts turns.
const ChatState = Annotation.Root({
  ...MessagesAnnotation.spec,
  turns: Annotation({ reducer: (a, b) => a + b, default: () => 0 }),
});
for (const [name, open, close] of savers) {
  const saver = open("chat");
  const graph = new StateGraph(ChatState)
    .addNode("answer", (s) => ({ messages: [new AIMessage(`Answer number ${s.turns + 1}: noted, thank you for the details you gave.`)] }))
    .addNode("count", () => ({ turns: 1 }))
    .addEdge(START, "answer")
    .addEdge("answer", "count")
    .addEdge("count", END)
    .compile({ checkpointer: saver });
  const window = Math.max(Math.floor(chatTurns / 100), 5);
  const lateFrom = Math.floor((chatTurns * 2) / 5); // turn 400 of 1000
  // CPU time is averaged over more turns, as graphctl does.
  const cpuWindow = Math.max(Math.floor(chatTurns / 20), 5);
  // As graphctl does: a warm-up thread of cpuWindow turns, deleted before
  // the chat, pays for the cold start of the process and the database, so
  // that the chat's early turns cost what a new thread's do.
  for (let turn = 1; turn <= cpuWindow; turn++) {
    await graph.invoke(
      { messages: [new HumanMessage(`Warm-up turn ${turn}: a detail about another order.`)] },
      { configurable: { thread_id: "warm-up" } },
    );
  }
  await saver.deleteThread("warm-up");
  let first = 0;
  let late = 0;
  let firstCPU = 0;
  let lateCPU = 0;
  let final;
  for (let turn = 1; turn <= chatTurns; turn++) {
    const cpu0 = cpu();
    const start = performance.now();
    final = await graph.invoke(
      { messages: [new HumanMessage(`Turn ${turn}: here is one more detail about my order and its delivery.`)] },
      { configurable: { thread_id: "chat" } },
    );
    const ms = performance.now() - start;
    const used = cpu() - cpu0;
    if (turn > 1 && turn <= 1 + window) first += ms;
    if (turn > lateFrom && turn <= lateFrom + window) late += ms;
    if (turn > 1 && turn <= 1 + cpuWindow) firstCPU += used;
    if (turn > lateFrom && turn <= lateFrom + cpuWindow) lateCPU += used;
  }
  if (final.turns !== chatTurns || final.messages.length !== 2 * chatTurns) {
    throw new Error(`chat on ${name} ended with ${final.turns} turns and ${final.messages.length} messages, want ${chatTurns} and ${2 * chatTurns}`);
  }
  close(saver);
  report("chat", `per turn, turns 2-${1 + window}, ${name}`, (first * 1000) / window, "µs");
  report("chat", `per turn, turns ${lateFrom + 1}-${lateFrom + window}, ${name}`, (late * 1000) / window, "µs");
  report("chat", `CPU per turn, turns 2-${1 + cpuWindow}, ${name}`, firstCPU / cpuWindow, "µs");
  report("chat", `CPU per turn, turns ${lateFrom + 1}-${lateFrom + cpuWindow}, ${name}`, lateCPU / cpuWindow, "µs");
  if (name === "sqlite") {
    // Measured after closing the database (which checkpoints the WAL into
    // the file) and a VACUUM, as graphctl measures Badger after compacting it.
    const db = new Database(join(dir, "chat.sqlite"));
    db.exec("VACUUM");
    db.close();
    const bytes = onDisk("chat.sqlite");
    const state = JSON.stringify({
      messages: final.messages.map((m) => ({ role: m.getType() === "human" ? "user" : "assistant", content: m.content, id: m.id })),
      turns: final.turns,
    });
    report("chat", `final state of ${chatTurns} turns (JSON)`, state.length / 1024, "KiB");
    report("chat", "data dir on disk (du, compacted), sqlite", bytes / 1024, "KiB");
    report("chat", "on disk / final state, sqlite", bytes / state.length, "×");
  }
}

// Fan-out: one task per item (Send), results gathered by a concatenating reducer, then a join.
const FanState = Annotation.Root({
  items: Annotation({ reducer: (_, b) => b, default: () => [] }),
  results: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  total: Annotation({ reducer: (_, b) => b, default: () => 0 }),
});
for (const [name, open, close] of savers) {
  const saver = open("fanout");
  const graph = new StateGraph(FanState)
    .addNode("work", (s) => ({ results: [s.item * 2] }))
    .addNode("join", (s) => ({ total: s.results.length }))
    .addConditionalEdges(START, (s) => s.items.map((item) => new Send("work", { item })))
    .addEdge("work", "join")
    .addEdge("join", END)
    .compile({ checkpointer: saver });
  const items = Array.from({ length: fanOut }, (_, i) => i);
  const n = name === "sqlite" ? Math.max(2, Math.floor(runs / 2)) : runs * 4;
  let total = 0;
  for (let i = 0; i <= n; i++) {
    const start = performance.now();
    const out = await graph.invoke({ items }, { configurable: { thread_id: `fan-${i}` } });
    if (out.total !== fanOut) throw new Error(`fan-out on ${name} joined ${out.total} results, want ${fanOut}`);
    if (i > 0) total += performance.now() - start;
  }
  close(saver);
  report("fan-out", `per run of ${fanOut} tasks + join, ${name}`, total / n, "ms");
}

if (!args["dir"]) rmSync(dir, { recursive: true, force: true });
