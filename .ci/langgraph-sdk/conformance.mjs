// Drives graphctl serve with the official @langchain/langgraph-sdk client the
// way an independent client suite does: every option the SDK sends is either
// honoured as the Agent Server honours it or refused with a 4xx naming it.
// node conformance.mjs http://127.0.0.1:PORT (graphs: echo, approve)
import assert from "node:assert/strict";
import http from "node:http";
import { step, collect, refused, watchedClient } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node conformance.mjs URL");
  process.exit(2);
}
const { client, nextStreamOpen } = watchedClient(apiUrl);
const hi = (text) => ({ messages: [{ role: "user", content: text }] });


await step("run options the Agent Server honours or treats as hints are accepted", async () => {
  const t = await client.threads.create();
  const values = await client.runs.wait(t.thread_id, "echo", {
    input: hi("hints"),
    durability: "exit",
    checkpointDuring: true,
    feedbackKeys: ["correctness"],
    context: { user: "ann" },
    afterSeconds: 0,
  });
  assert.equal(values.messages.at(-1).content, "You said: hints");
  const chunks = await collect(
    client.runs.stream(t.thread_id, "echo", { input: hi("resumable"), streamResumable: true, durability: "sync" }),
  );
  assert.deepEqual(chunks.map((c) => c.event), ["metadata", "values", "values", "end"]);
});

await step("a run's webhook is called with the run and its final values", async () => {
  const calls = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      calls.push({ method: req.method, body: JSON.parse(body) });
      res.end("ok");
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const t = await client.threads.create();
    const webhook = `http://127.0.0.1:${receiver.address().port}/hook`;
    const run = await client.runs.create(t.thread_id, "echo", { input: hi("hooked"), webhook });
    for (let i = 0; i < 400 && calls.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(calls.length, 1, "the webhook was called once");
    const got = calls[0];
    assert.equal(got.method, "POST");
    assert.equal(got.body.run_id, run.run_id);
    assert.equal(got.body.thread_id, t.thread_id);
    assert.equal(got.body.status, "success");
    assert.equal(got.body.values.messages.at(-1).content, "You said: hooked");
    assert.ok(!Number.isNaN(Date.parse(got.body.webhook_sent_at)));
  } finally {
    receiver.close();
  }
});

await step("run options graphctl does not carry out are refused naming them", async () => {
  const t = await client.threads.create();
  await refused(() => client.runs.create(t.thread_id, "echo", { input: hi("x"), webhook: "ftp://127.0.0.1/hook" }), 422, "webhook");
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), afterSeconds: -30 }), 422, "after_seconds");
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), durability: "later" }), 422, "durability");
  await refused(() => collect(client.runs.stream(t.thread_id, "echo", { input: hi("x"), streamMode: ["bogus"] })), 422, "stream_mode");
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), multitaskStrategy: "bogus" }), 422, "multitask_strategy");
  await refused(() => client.runs.wait(null, "echo", { input: hi("x"), onCompletion: "later" }), 422, "on_completion");
  const runs = await client.runs.list(t.thread_id);
  assert.equal(runs.length, 0, "a refused request must not start a run");
});

await step("a stateless run with onCompletion keep keeps its thread", async () => {
  let created;
  const values = await client.runs.wait(null, "echo", {
    input: hi("keep me"),
    onCompletion: "keep",
    onRunCreated: (meta) => (created = meta),
  });
  assert.equal(values.messages.at(-1).content, "You said: keep me");
  assert.ok(created?.thread_id, `Content-Location names the thread: ${JSON.stringify(created)}`);
  const state = await client.threads.getState(created.thread_id);
  assert.equal(state.values.messages.at(-1).content, "You said: keep me");
  let deleted;
  await client.runs.wait(null, "echo", { input: hi("forget me"), onRunCreated: (meta) => (deleted = meta) });
  assert.ok(deleted?.run_id);
});

await step("search and list keep the selected fields and refuse unknown ones", async () => {
  const t = await client.threads.create({ metadata: { suite: "select" } });
  await client.runs.wait(t.thread_id, "echo", { input: hi("select") });
  const assistants = await client.assistants.search({ select: ["assistant_id", "name"], sortBy: "name", sortOrder: "asc" });
  assert.deepEqual(Object.keys(assistants[0]).sort(), ["assistant_id", "name"]);
  await refused(() => client.assistants.search({ select: ["nope"] }), 422, "select");
  const threads = await client.threads.search({ metadata: { suite: "select" }, select: ["thread_id", "status"] });
  assert.deepEqual(threads, [{ thread_id: t.thread_id, status: "idle" }]);
  await refused(() => client.threads.search({ select: ["nope"] }), 422, "select");
  const runs = await client.runs.list(t.thread_id, { select: ["run_id", "status"] });
  assert.equal(runs.length, 1);
  assert.deepEqual(Object.keys(runs[0]).sort(), ["run_id", "status"]);
  assert.equal(runs[0].status, "success");
  assert.equal((await client.runs.list(t.thread_id, { status: "success" })).length, 1);
  assert.equal((await client.runs.list(t.thread_id, { status: "pending" })).length, 0);
  await refused(() => client.runs.list(t.thread_id, { select: ["nope"] }), 422, "select");
  await refused(() => client.runs.list(t.thread_id, { status: "finished" }), 422, "status");
  const cron = await client.crons.create("echo", { schedule: "0 0 * * *", input: hi("cron") });
  try {
    const crons = await client.crons.search({ assistantId: "echo", select: ["cron_id", "schedule"] });
    assert.deepEqual(crons, [{ cron_id: cron.cron_id, schedule: "0 0 * * *" }]);
    await refused(() => client.crons.search({ select: ["nope"] }), 422, "select");
  } finally {
    await client.crons.delete(cron.cron_id);
  }
});

// joinThread reads a thread stream in the background until stop() or until
// it has seen want run_done frames.
const joinThread = async (threadId, want, options = {}) => {
  const ac = new AbortController();
  const chunks = [];
  const opened = nextStreamOpen();
  const reading = (async () => {
    try {
      for await (const chunk of client.threads.joinStream(threadId, { ...options, signal: ac.signal })) {
        chunks.push(chunk);
        if (chunks.filter((c) => c.event === "run_done").length === want) ac.abort();
      }
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    }
    return chunks;
  })();
  const res = await opened;
  assert.equal(res.status, 200, `thread stream: HTTP ${res.status}`);
  assert.equal(res.headers.get("location"), `/threads/${threadId}/stream`, "the SDK reconnects to Location");
  return { reading, stop: () => ac.abort() };
};

await step("threads.joinStream follows each run on the thread, one after another", async () => {
  const t = await client.threads.create();
  const joined = await joinThread(t.thread_id, 2);
  const first = await client.runs.create(t.thread_id, "echo", { input: hi("one") });
  await client.runs.join(t.thread_id, first.run_id);
  const second = await client.runs.create(t.thread_id, "echo", { input: hi("two") });
  await client.runs.join(t.thread_id, second.run_id);
  const timer = setTimeout(joined.stop, 10000);
  const chunks = await joined.reading;
  clearTimeout(timer);
  const done = chunks.filter((c) => c.event === "run_done");
  assert.deepEqual(done.map((c) => [c.data.run_id, c.data.status]), [[first.run_id, "success"], [second.run_id, "success"]], JSON.stringify(chunks));
  const metadata = chunks.filter((c) => c.event === "metadata").map((c) => c.data.run_id);
  assert.deepEqual(metadata, [first.run_id, second.run_id]);
  const lastValues = chunks.filter((c) => c.event === "values").at(-1).data;
  assert.equal(lastValues.messages.at(-1).content, "You said: two");
  assert.ok(!chunks.some((c) => c.event === "end"), "a thread stream stays open past each run's end");

  const life = await joinThread(t.thread_id, 1, { streamMode: "lifecycle" });
  const third = await client.runs.create(t.thread_id, "echo", { input: hi("three") });
  await client.runs.join(t.thread_id, third.run_id);
  const timer2 = setTimeout(life.stop, 10000);
  const events = (await life.reading).map((c) => c.event);
  clearTimeout(timer2);
  assert.deepEqual(events, ["metadata", "run_done"]);

  // Deleting the thread ends its streams.
  const gone = await joinThread(t.thread_id, 1);
  await client.threads.delete(t.thread_id);
  let timedOut = false;
  const timer3 = setTimeout(() => ((timedOut = true), gone.stop()), 10000);
  assert.deepEqual(await gone.reading, []);
  clearTimeout(timer3);
  assert.ok(!timedOut, "the thread stream stayed open after its thread was deleted");
  const t2 = await client.threads.create();
  await refused(() => collect(client.threads.joinStream(t2.thread_id, { streamMode: "everything" })), 422, "stream_mode");
  await refused(() => collect(client.threads.joinStream("00000000-0000-4000-8000-000000000000")), 404, "not found");
});

await step("runs.joinStream of a stateless run (no thread) streams its frames", async () => {
  const run = await client.runs.create(null, "echo", { input: hi("stateless"), streamMode: ["values"] });
  const chunks = await collect(client.runs.joinStream(null, run.run_id));
  const values = chunks.filter((c) => c.event === "values").at(-1);
  assert.equal(values?.data.messages.at(-1).content, "You said: stateless", JSON.stringify(chunks));
  const unknown = await collect(client.runs.joinStream(null, "00000000-0000-4000-8000-000000000000"));
  assert.deepEqual(unknown.map((c) => c.event), ["end"]);
});

await step("crons check the run they make as a run request is checked", async () => {
  await refused(() => client.crons.create("echo", { schedule: "0 0 * * *", interruptBefore: ["nope"] }), 422, "interrupt_before");
  const cron = await client.crons.create("echo", { schedule: "0 0 * * *", input: hi("cron") });
  try {
    await refused(() => client.crons.update(cron.cron_id, { interruptAfter: ["nope"] }), 422, "interrupt_after");
    await refused(() => client.crons.update(cron.cron_id, { webhook: "not a url" }), 422, "webhook");
    const updated = await client.crons.update(cron.cron_id, { interruptBefore: ["answer"], enabled: false });
    assert.deepEqual(updated.payload.interrupt_before, ["answer"]);
    assert.equal(updated.enabled, false);
  } finally {
    await client.crons.delete(cron.cron_id);
  }
});

await step("the store shows the client's items only, not the server's own records", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "echo", { input: hi("audited") }); // writes the audit log
  const own = (ns) => ns[0] === "graphctl" || (ns[0] === "audit" && ["conversations", "runs"].includes(ns[1]));
  const all = await client.store.listNamespaces({ limit: 1000 });
  assert.ok(!all.namespaces.some(own), JSON.stringify(all));
  const top = await client.store.listNamespaces({ maxDepth: 1, limit: 1000 });
  assert.ok(!top.namespaces.some((ns) => ns[0] === "audit" || ns[0] === "graphctl"), JSON.stringify(top));
  const items = await client.store.searchItems([], { limit: 100 });
  assert.ok(!items.items.some((it) => own(it.namespace)), JSON.stringify(items.items.map((it) => it.namespace)));
  await refused(() => client.store.putItem(["audit", "runs", t.thread_id], "k", { x: 1 }), 403, "reserved");
  await refused(() => client.store.deleteItem(["audit", "conversations"], t.thread_id), 403, "reserved");
  await refused(() => client.store.getItem(["graphctl", "threads"], t.thread_id), 403, "reserved");
  // A client's own "audit" namespace is the client's.
  await client.store.putItem(["audit", "mine"], "k", { x: 1 });
  assert.deepEqual((await client.store.getItem(["audit", "mine"], "k")).value, { x: 1 });
  const mine = await client.store.listNamespaces({ prefix: ["audit"], limit: 1000 });
  assert.deepEqual(mine.namespaces, [["audit", "mine"]]);
  await client.store.deleteItem(["audit", "mine"], "k");
});

await step("a run that stops at an interrupt ends success; its thread is interrupted", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "approve", { input: {} });
  await client.runs.join(t.thread_id, run.run_id);
  assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "success");
  assert.equal((await client.threads.get(t.thread_id)).status, "interrupted");
  const e = await client.threads.create();
  const before = await client.runs.create(e.thread_id, "echo", { input: hi("x"), interruptBefore: ["answer"] });
  await client.runs.join(e.thread_id, before.run_id);
  assert.equal((await client.runs.get(e.thread_id, before.run_id)).status, "success");
  assert.equal((await client.threads.get(e.thread_id)).status, "interrupted");
});
