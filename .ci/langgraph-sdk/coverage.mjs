// Calls every method of the official @langchain/langgraph-sdk client
// (assistants, threads, runs, crons, store) with the options a user passes,
// and the requests the Python SDK (langgraph_sdk) sends where they differ
// from the JS client's, against graphctl serve, and checks the answers have
// the fields and values the SDKs' types promise. Options graphctl does not
// carry out must be refused with a 4xx JSON error naming them; hostile
// requests (wrong types, unknown ids, malformed JSON, out-of-range paging)
// must be 4xx JSON errors, never a 500.
// node coverage.mjs http://127.0.0.1:PORT
// Graphs: echo (one reply node), approve (an interrupt between ask and
// yes/no), slow (a node held until GRAPHCTL_SERVERTEST_GATE/THREAD.release).
// Every check runs; the script lists each failure and exits 1 if any.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collect, refused } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node coverage.mjs URL");
  process.exit(2);
}
const gate = process.env.GRAPHCTL_SERVERTEST_GATE;
const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const hi = (text) => ({ messages: [{ role: "user", content: text }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isTime = (v) => typeof v === "string" && !Number.isNaN(Date.parse(v));

const failures = [];
// check runs fn and records its failure without stopping the script.
const check = async (name, fn) => {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    failures.push(name);
    console.error(`FAIL ${name}: ${err.stack || err}`);
  }
};

// raw sends a request as any client may, and reads the answer.
const raw = async (method, path, body, headers = {}) => {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    if (!Object.keys(init.headers).some((h) => h.toLowerCase() === "content-type")) init.headers["content-type"] = "application/json";
  }
  const res = await fetch(`${apiUrl}${path}`, init);
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
};


// clientError asserts a raw answer is a 4xx JSON error (optionally of one
// status, naming what).
const clientError = (res, status, what) => {
  const where = `${res.status} ${res.text.slice(0, 300)}`;
  assert.ok(res.status >= 400 && res.status < 500, `want a 4xx, got ${where}`);
  if (Array.isArray(status)) assert.ok(status.includes(res.status), `want one of ${status}, got ${where}`);
  else if (status) assert.equal(res.status, status, where);
  assert.match(res.headers.get("content-type") || "", /application\/json/, where);
  assert.ok(res.json && typeof res.json.detail === "string", `no JSON detail: ${where}`);
  if (what) assert.match(res.json.detail, new RegExp(what, "i"), where);
};

// SDK shapes (schema.d.ts, langgraph_sdk/schema.py).
const assertAssistant = (a, versioned = true) => {
  for (const k of ["assistant_id", "graph_id", "config", "context", "created_at", "metadata", "version", "name"]) assert.ok(k in a, `assistant has no ${k}: ${JSON.stringify(a)}`);
  assert.equal(typeof a.assistant_id, "string");
  assert.equal(typeof a.graph_id, "string");
  assert.equal(typeof a.config, "object");
  assert.equal(typeof a.metadata, "object");
  assert.equal(typeof a.version, "number");
  assert.equal(typeof a.name, "string");
  assert.ok(isTime(a.created_at), a.created_at);
  if (versioned) assert.ok(isTime(a.updated_at), `updated_at ${a.updated_at}`);
};
const assertThread = (t) => {
  for (const k of ["thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "status", "values", "interrupts"]) assert.ok(k in t, `thread has no ${k}: ${JSON.stringify(t)}`);
  assert.ok(isTime(t.created_at) && isTime(t.updated_at), JSON.stringify(t));
  assert.ok(["idle", "busy", "interrupted", "error"].includes(t.status), t.status);
  assert.equal(typeof t.metadata, "object");
  assert.equal(typeof t.interrupts, "object");
  assert.ok(!Array.isArray(t.interrupts));
};
const assertCheckpoint = (c, thread) => {
  assert.equal(typeof c, "object", JSON.stringify(c));
  for (const k of ["thread_id", "checkpoint_ns", "checkpoint_id"]) assert.ok(k in c, `checkpoint has no ${k}: ${JSON.stringify(c)}`);
  if (thread) assert.equal(c.thread_id, thread);
  assert.equal(typeof c.checkpoint_ns, "string");
};
const assertState = (s, thread) => {
  for (const k of ["values", "next", "checkpoint", "metadata", "created_at", "parent_checkpoint", "tasks", "interrupts"]) assert.ok(k in s, `state has no ${k}: ${JSON.stringify(s)}`);
  assert.ok(Array.isArray(s.next) && Array.isArray(s.tasks) && Array.isArray(s.interrupts));
  assertCheckpoint(s.checkpoint, thread);
  for (const t of s.tasks) {
    for (const k of ["id", "name", "error", "interrupts", "checkpoint", "state"]) assert.ok(k in t, `task has no ${k}: ${JSON.stringify(t)}`);
  }
};
const assertRun = (r) => {
  for (const k of ["run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata", "multitask_strategy"]) assert.ok(k in r, `run has no ${k}: ${JSON.stringify(r)}`);
  assert.match(r.run_id, uuid);
  assert.ok(["pending", "running", "error", "success", "timeout", "interrupted"].includes(r.status), r.status);
  assert.ok(isTime(r.created_at) && isTime(r.updated_at));
  assert.equal(typeof r.metadata, "object");
};
const assertCron = (c) => {
  for (const k of ["cron_id", "assistant_id", "thread_id", "end_time", "schedule", "created_at", "updated_at", "payload", "user_id", "next_run_date", "metadata", "enabled"])
    assert.ok(k in c, `cron has no ${k}: ${JSON.stringify(c)}`);
  assert.ok(isTime(c.created_at) && isTime(c.updated_at));
  assert.equal(typeof c.enabled, "boolean");
  assert.equal(typeof c.payload, "object");
};
const assertItem = (it) => {
  for (const k of ["namespace", "key", "value", "created_at", "updated_at"]) assert.ok(k in it, `item has no ${k}: ${JSON.stringify(it)}`);
  assert.ok(Array.isArray(it.namespace));
  assert.ok(isTime(it.created_at) && isTime(it.updated_at));
};
// sorted asserts list is ordered by field (asc or desc), null above every
// value as PostgreSQL orders it (last ascending, first descending).
const sorted = (list, field, order) => {
  const vals = list.map((x) => x[field]);
  const cmp = (a, b) => (a === b ? 0 : a == null ? 1 : b == null ? -1 : a < b ? -1 : a > b ? 1 : 0);
  const want = [...vals].sort(cmp);
  if (order === "desc") want.reverse();
  assert.deepEqual(vals, want, `${field} ${order}`);
};

// release lets the slow graph's node on thread finish.
const release = (thread) => writeFileSync(join(gate, `${thread}.release`), "");
const started = async (thread) => {
  for (let i = 0; i < 400; i++) {
    if (existsSync(join(gate, `${thread}.started`))) return;
    await sleep(25);
  }
  throw new Error(`the slow node of ${thread} never started`);
};

// ---------------------------------------------------------------- assistants

let asst;
await check("assistants.search: every graph's assistant with the SDK's fields", async () => {
  const list = await client.assistants.search({ limit: 100 });
  assert.deepEqual(list.map((a) => a.assistant_id).filter((id) => ["echo", "approve", "slow"].includes(id)).sort(), ["approve", "echo", "slow"]);
  for (const a of list) assertAssistant(a);
  const echo = list.find((a) => a.assistant_id === "echo");
  assert.equal(echo.graph_id, "echo");
  assert.equal(echo.name, "echo");
  assert.equal(echo.description, "Replies with the user's last message.");
  assert.equal(echo.metadata.created_by, "system");
  assert.equal(list.find((a) => a.assistant_id === "approve").description, null);
});

await check("assistants.create with every field, ifExists raise and do_nothing", async () => {
  asst = await client.assistants.create({
    graphId: "echo",
    assistantId: "cov-echo",
    config: { configurable: { tone: "dry" }, tags: ["a"], recursion_limit: 10 },
    context: { user: "ann" },
    metadata: { team: "cov", n: 1 },
    name: "Coverage Echo",
    description: "an echo for the coverage suite",
    ifExists: "raise",
  });
  assertAssistant(asst);
  assert.equal(asst.assistant_id, "cov-echo");
  assert.equal(asst.graph_id, "echo");
  assert.equal(asst.name, "Coverage Echo");
  assert.equal(asst.description, "an echo for the coverage suite");
  assert.deepEqual(asst.context, { user: "ann" });
  assert.equal(asst.config.configurable.tone, "dry");
  assert.equal(asst.metadata.team, "cov");
  assert.equal(asst.version, 1);
  const again = await client.assistants.create({ graphId: "echo", assistantId: "cov-echo", ifExists: "do_nothing", name: "other" });
  assert.equal(again.name, "Coverage Echo");
  await refused(() => client.assistants.create({ graphId: "echo", assistantId: "cov-echo" }), 409, "exists");
  await refused(() => client.assistants.create({ graphId: "nope" }), 404, "nope");
  await refused(() => client.assistants.create({ graphId: "echo", ifExists: "replace" }), 422, "if_exists");
  const generated = await client.assistants.create({ graphId: "approve" });
  assert.match(generated.assistant_id, uuid);
  assert.equal(generated.name, "Untitled");
  assert.equal(generated.description, null);
  await client.assistants.delete(generated.assistant_id);
});

await check("assistants.get, getGraph (xray), getSchemas, getSubgraphs", async () => {
  const a = await client.assistants.get("cov-echo");
  assertAssistant(a);
  assert.equal(a.name, "Coverage Echo");
  for (const xray of [undefined, true, false, 1]) {
    const g = await client.assistants.getGraph("cov-echo", { xray });
    assert.ok(Array.isArray(g.nodes) && Array.isArray(g.edges), JSON.stringify(g));
    assert.ok(g.nodes.some((n) => n.id === "answer"));
    assert.ok(g.edges.every((e) => typeof e.source === "string" && typeof e.target === "string"));
  }
  const s = await client.assistants.getSchemas("cov-echo");
  assert.equal(s.graph_id, "echo");
  for (const k of ["input_schema", "output_schema", "state_schema", "config_schema", "context_schema"]) assert.ok(k in s, `schemas have no ${k}`);
  assert.ok(s.state_schema.properties.messages);
  const subs = await client.assistants.getSubgraphs("cov-echo");
  assert.deepEqual(subs, {});
  assert.deepEqual(await client.assistants.getSubgraphs("cov-echo", { recurse: true }), {});
  assert.deepEqual(await client.assistants.getSubgraphs("cov-echo", { namespace: "answer" }), {});
  await refused(() => client.assistants.get("no-such-assistant"), 404, "no-such-assistant");
  await refused(() => client.assistants.getGraph("no-such-assistant"), 404);
  await refused(() => client.assistants.getSchemas("no-such-assistant"), 404);
  await refused(() => client.assistants.getSubgraphs("no-such-assistant"), 404);
  clientError(await raw("GET", "/assistants/echo/graph?xray=sideways"), 422, "xray");
});

await check("assistants.search: graphId, name, metadata, limit/offset, pagination, sortBy/sortOrder, select", async () => {
  const byGraph = await client.assistants.search({ graphId: "echo", limit: 100 });
  assert.deepEqual(byGraph.map((a) => a.assistant_id).sort(), ["cov-echo", "echo"]);
  const byName = await client.assistants.search({ name: "coverage", limit: 100 });
  assert.deepEqual(byName.map((a) => a.assistant_id), ["cov-echo"]);
  const byMeta = await client.assistants.search({ metadata: { team: "cov" }, limit: 100 });
  assert.deepEqual(byMeta.map((a) => a.assistant_id), ["cov-echo"]);
  const all = await client.assistants.search({ limit: 100 });
  const page = await client.assistants.search({ limit: 2, offset: 1, includePagination: true });
  assert.equal(page.assistants.length, 2);
  assert.deepEqual(page.assistants.map((a) => a.assistant_id), all.slice(1, 3).map((a) => a.assistant_id));
  assert.equal(page.next, all.length > 3 ? "3" : null);
  const last = await client.assistants.search({ limit: 100, includePagination: true });
  assert.equal(last.next, null);
  for (const sortBy of ["assistant_id", "graph_id", "name", "created_at", "updated_at"]) {
    for (const sortOrder of ["asc", "desc"]) sorted(await client.assistants.search({ sortBy, sortOrder, limit: 100 }), sortBy, sortOrder);
  }
  const sel = await client.assistants.search({ select: ["assistant_id", "version"], limit: 100 });
  for (const a of sel) assert.deepEqual(Object.keys(a).sort(), ["assistant_id", "version"]);
  await refused(() => client.assistants.search({ sortBy: "version" }), 422, "sort_by");
  await refused(() => client.assistants.search({ sortOrder: "up" }), 422, "sort_order");
});

await check("assistants.count: graphId, name, metadata", async () => {
  assert.equal(await client.assistants.count({ graphId: "echo" }), 2);
  assert.equal(await client.assistants.count({ name: "Coverage" }), 1);
  assert.equal(await client.assistants.count({ metadata: { team: "cov" } }), 1);
  assert.ok((await client.assistants.count()) >= 4);
});

await check("assistants.update, getVersions (metadata, limit, offset), setLatest", async () => {
  const up = await client.assistants.update("cov-echo", { metadata: { stage: "two" }, name: "Coverage Echo 2", description: "v2", config: { configurable: { tone: "warm" } }, context: { user: "bob" } });
  assertAssistant(up);
  assert.equal(up.version, 2);
  assert.equal(up.name, "Coverage Echo 2");
  assert.equal(up.description, "v2");
  assert.equal(up.metadata.team, "cov", "update merges metadata");
  assert.equal(up.metadata.stage, "two");
  assert.deepEqual(up.context, { user: "bob" });
  assert.equal(up.config.configurable.tone, "warm");
  const moved = await client.assistants.update("cov-echo", { graphId: "approve" });
  assert.equal(moved.graph_id, "approve");
  assert.equal(moved.version, 3);
  const versions = await client.assistants.getVersions("cov-echo");
  assert.deepEqual(versions.map((v) => v.version), [3, 2, 1]);
  for (const v of versions) assertAssistant(v, false);
  assert.deepEqual((await client.assistants.getVersions("cov-echo", { limit: 1, offset: 1 })).map((v) => v.version), [2]);
  assert.deepEqual((await client.assistants.getVersions("cov-echo", { metadata: { stage: "two" } })).map((v) => v.version), [3, 2]);
  const latest = await client.assistants.setLatest("cov-echo", 1);
  assertAssistant(latest);
  assert.equal(latest.version, 1);
  assert.equal(latest.graph_id, "echo");
  assert.equal((await client.assistants.get("cov-echo")).name, "Coverage Echo");
  await refused(() => client.assistants.setLatest("cov-echo", 99), 404, "99");
  await refused(() => client.assistants.update("no-such-assistant", { name: "x" }), 404);
  await refused(() => client.assistants.update("cov-echo", { graphId: "nope" }), 404, "nope");
  await refused(() => client.assistants.getVersions("no-such-assistant"), 404);
});

await check("a run on a created assistant runs its graph with its config", async () => {
  const t = await client.threads.create();
  const values = await client.runs.wait(t.thread_id, "cov-echo", { input: hi("via assistant") });
  assert.equal(values.messages.at(-1).content, "You said: via assistant");
  const th = await client.threads.get(t.thread_id);
  assert.equal(th.metadata.assistant_id, "cov-echo");
  assert.equal(th.metadata.graph_id, "echo");
});

await check("assistants.delete with deleteThreads deletes its threads", async () => {
  const a = await client.assistants.create({ graphId: "echo", name: "doomed" });
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, a.assistant_id, { input: hi("bye") });
  const keep = await client.threads.create();
  await client.runs.wait(keep.thread_id, "echo", { input: hi("stay") });
  await client.assistants.delete(a.assistant_id, { deleteThreads: true });
  await refused(() => client.assistants.get(a.assistant_id), 404);
  await refused(() => client.threads.get(t.thread_id), 404);
  assert.equal((await client.threads.get(keep.thread_id)).thread_id, keep.thread_id);
  const b = await client.assistants.create({ graphId: "echo" });
  const t2 = await client.threads.create();
  await client.runs.wait(t2.thread_id, b.assistant_id, { input: hi("kept") });
  await client.assistants.delete(b.assistant_id);
  assert.equal((await client.threads.get(t2.thread_id)).thread_id, t2.thread_id);
  await refused(() => client.assistants.delete("no-such-assistant"), 404);
  // The Python SDK sends delete_threads=true (JS: true/false).
  const c = await client.assistants.create({ graphId: "echo" });
  assert.equal((await raw("DELETE", `/assistants/${c.assistant_id}?delete_threads=true`)).status, 204);
});

// ------------------------------------------------------------------- threads

let thread;
await check("threads.create with every field; ifExists raise and do_nothing", async () => {
  const id = "cov-thread-1";
  thread = await client.threads.create({ threadId: id, metadata: { suite: "cov", n: 1 }, graphId: "echo", ifExists: "raise", ttl: 60 });
  assertThread(thread);
  assert.equal(thread.thread_id, id);
  assert.equal(thread.status, "idle");
  assert.deepEqual(thread.values, {});
  assert.equal(thread.metadata.suite, "cov");
  assert.equal(thread.metadata.graph_id, "echo");
  const same = await client.threads.create({ threadId: id, ifExists: "do_nothing", metadata: { other: true } });
  assert.equal(same.metadata.suite, "cov");
  await refused(() => client.threads.create({ threadId: id }), 409, id);
  await refused(() => client.threads.create({ ifExists: "overwrite" }), 422, "if_exists");
  const plain = await client.threads.create();
  assert.match(plain.thread_id, uuid);
  assert.deepEqual(plain.metadata, {});
});

await check("threads.get after a run: values, status, interrupts", async () => {
  await client.runs.wait(thread.thread_id, "echo", { input: hi("first") });
  const t = await client.threads.get(thread.thread_id);
  assertThread(t);
  assert.equal(t.values.messages.at(-1).content, "You said: first");
  assert.equal(t.status, "idle");
  assert.deepEqual(t.interrupts, {});
  const a = await client.threads.create();
  const waiting = await client.runs.wait(a.thread_id, "approve", { input: {} });
  const at = await client.threads.get(a.thread_id);
  assert.equal(at.status, "interrupted");
  const ins = Object.values(at.interrupts).flat();
  assert.equal(ins.length, 1);
  assert.equal(ins[0].id, waiting.__interrupt__[0].id);
  assert.equal(ins[0].value.message, "Approve it? (yes/no)");
  await refused(() => client.threads.get("no-such-thread"), 404, "no-such-thread");
  // The Python SDK's threads.get(include=[...]).
  const inc = await raw("GET", `/threads/${thread.thread_id}?include=ttl`);
  assert.equal(inc.status, 200, inc.text);
  assert.equal(inc.json.thread_id, thread.thread_id);
});

await check("threads.update merges metadata and sets ttl; Prefer: return=minimal answers 204", async () => {
  const up = await client.threads.update(thread.thread_id, { metadata: { label: "first" }, ttl: { ttl: 120, strategy: "delete" } });
  assertThread(up);
  assert.equal(up.metadata.label, "first");
  assert.equal(up.metadata.suite, "cov");
  const up2 = await client.threads.update(thread.thread_id, { metadata: { n: 2 }, ttl: 30 });
  assert.equal(up2.metadata.n, 2);
  await refused(() => client.threads.update("no-such-thread", { metadata: {} }), 404);
  const minimal = await raw("PATCH", `/threads/${thread.thread_id}`, { metadata: { minimal: true } }, { Prefer: "return=minimal" });
  assert.equal(minimal.status, 204, minimal.text);
  assert.equal((await client.threads.get(thread.thread_id)).metadata.minimal, true);
});

const searchIds = async (q) => (await client.threads.search({ limit: 1000, ...q })).map((t) => t.thread_id);
await check("threads.search: metadata, ids, values, status, limit/offset, sortBy/sortOrder, select", async () => {
  const a = await client.threads.create({ metadata: { suite: "cov-search", k: "a" } });
  const b = await client.threads.create({ metadata: { suite: "cov-search", k: "b" } });
  const c = await client.threads.create({ metadata: { suite: "cov-search", k: "c" } });
  await client.runs.wait(b.thread_id, "echo", { input: hi("bee") });
  await client.runs.wait(c.thread_id, "approve", { input: {} });
  assert.deepEqual((await searchIds({ metadata: { suite: "cov-search" } })).sort(), [a, b, c].map((t) => t.thread_id).sort());
  assert.deepEqual(await searchIds({ metadata: { suite: "cov-search", k: "b" } }), [b.thread_id]);
  assert.deepEqual((await searchIds({ ids: [a.thread_id, c.thread_id] })).sort(), [a.thread_id, c.thread_id].sort());
  assert.deepEqual(await searchIds({ metadata: { suite: "cov-search" }, status: "interrupted" }), [c.thread_id]);
  assert.deepEqual(await searchIds({ metadata: { suite: "cov-search" }, status: "idle", values: { messages: [{ content: "You said: bee" }] } }), [b.thread_id]);
  // Newest first by default.
  assert.deepEqual(await searchIds({ metadata: { suite: "cov-search" } }), [c, b, a].map((t) => t.thread_id));
  assert.deepEqual(await searchIds({ metadata: { suite: "cov-search" }, limit: 1, offset: 1 }), [b.thread_id]);
  for (const sortBy of ["thread_id", "status", "created_at", "updated_at", "state_updated_at"]) {
    for (const sortOrder of ["asc", "desc"]) sorted(await client.threads.search({ metadata: { suite: "cov-search" }, sortBy, sortOrder }), sortBy, sortOrder);
  }
  const sel = await client.threads.search({ metadata: { suite: "cov-search" }, select: ["thread_id", "values", "interrupts"] });
  for (const t of sel) assert.deepEqual(Object.keys(t).sort(), ["interrupts", "thread_id", "values"]);
  for (const t of await client.threads.search({ metadata: { suite: "cov-search" } })) assertThread(t);
  await refused(() => client.threads.search({ status: "sleeping" }), 422, "status");
  await refused(() => client.threads.search({ sortBy: "values" }), 422, "sort_by");
  await refused(() => client.threads.search({ limit: 1001 }), 422, "limit");
  await refused(() => client.threads.search({ offset: -1 }), 422, "offset");
});

await check("threads.search extract (Python SDK): values at JSON paths, returned under extracted", async () => {
  const t = await client.threads.create({ metadata: { suite: "cov-extract" } });
  await client.runs.wait(t.thread_id, "echo", { input: hi("pick me") });
  const res = await raw("POST", "/threads/search", {
    metadata: { suite: "cov-extract" },
    extract: { last: "values.messages[-1].content", first: "values.messages[0].content", suite: "metadata.suite", none: "values.nope.deeper" },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.length, 1);
  assert.deepEqual(res.json[0].extracted, { last: "You said: pick me", first: "pick me", suite: "cov-extract", none: null });
  const tooMany = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, "values"]));
  clientError(await raw("POST", "/threads/search", { extract: tooMany }), 422, "extract");
  clientError(await raw("POST", "/threads/search", { extract: { bad: "values.messages[x" } }), 422, "extract");
  clientError(await raw("POST", "/threads/search", { extract: "values" }), 422, "extract");
});

await check("threads.count: metadata, values, status", async () => {
  assert.equal(await client.threads.count({ metadata: { suite: "cov-search" } }), 3);
  assert.equal(await client.threads.count({ metadata: { suite: "cov-search" }, status: "interrupted" }), 1);
  assert.equal(await client.threads.count({ values: { messages: [{ content: "You said: bee" }] } }), 1);
  assert.ok((await client.threads.count()) >= 5);
  await refused(() => client.threads.count({ status: "sleeping" }), 422, "status");
});

await check("threads.copy copies state and metadata; Python's copy sends no body", async () => {
  const copy = await client.threads.copy(thread.thread_id);
  assertThread(copy);
  assert.notEqual(copy.thread_id, thread.thread_id);
  assert.equal(copy.values.messages.at(-1).content, "You said: first");
  assert.equal(copy.metadata.suite, "cov");
  const again = await raw("POST", `/threads/${thread.thread_id}/copy`, undefined);
  assert.equal(again.status, 200, again.text);
  assert.notEqual(again.json.thread_id, thread.thread_id);
  await refused(() => client.threads.copy("no-such-thread"), 404);
});

await check("a copy's state is the original's but for its thread id; state metadata names the thread and holds the run's metadata", async () => {
  const t = await client.threads.create();
  assert.deepEqual(await client.threads.getHistory(t.thread_id), []);
  await client.runs.wait(t.thread_id, "echo", { input: hi("one"), metadata: { run_metadata: "x" } });
  await client.runs.wait(t.thread_id, "echo", { input: hi("two") });
  const st = await client.threads.getState(t.thread_id);
  assert.equal(st.metadata.thread_id, t.thread_id);
  const tagged = await client.threads.getHistory(t.thread_id, { metadata: { run_metadata: "x" }, limit: 100 });
  const all = await client.threads.getHistory(t.thread_id, { limit: 100 });
  assert.ok(tagged.length >= 2 && tagged.length < all.length, `${tagged.length} of ${all.length} states carry the first run's metadata`);
  assert.ok(tagged.every((s) => s.metadata.run_metadata === "x"));
  const copy = await client.threads.copy(t.thread_id);
  const cs = await client.threads.getState(copy.thread_id);
  const swap = (c) => (c ? { ...c, thread_id: copy.thread_id } : c);
  assert.deepEqual(cs, { ...st, metadata: { ...st.metadata, thread_id: copy.thread_id }, checkpoint: swap(st.checkpoint), parent_checkpoint: swap(st.parent_checkpoint) });
  const ch = await client.threads.getHistory(copy.thread_id, { limit: 100 });
  assert.equal(ch.length, all.length);
});

await check("a delayed run: its thread refuses state updates (409) until it is cancelled; the cancelled run is interrupted", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "echo", { input: hi("first") });
  const pending = await client.runs.create(t.thread_id, "echo", { input: hi("later"), afterSeconds: 30 });
  assert.equal((await client.runs.list(t.thread_id, { status: "pending" })).length, 1);
  await refused(() => client.threads.updateState(t.thread_id, { values: { note: "Sisyphus" } }), 409);
  await client.runs.cancel(t.thread_id, pending.run_id);
  await client.runs.join(t.thread_id, pending.run_id);
  assert.equal((await client.runs.get(t.thread_id, pending.run_id)).status, "interrupted");
  assert.equal((await client.runs.list(t.thread_id, { status: "interrupted" })).length, 1);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
  assert.ok(!JSON.stringify(await client.threads.getState(t.thread_id)).includes("Sisyphus"));
  await client.threads.updateState(t.thread_id, { values: { note: "Sisyphus" } });
  assert.equal((await client.threads.getState(t.thread_id)).values.note, "Sisyphus");
});

await check("a failed run: wait throws its error (raiseError false returns __error__), the thread and run are error", async () => {
  const t = await client.threads.create();
  await assert.rejects(client.runs.wait(t.thread_id, "echo", { input: { note: "no messages" } }), /RunError/);
  const failed = await client.threads.get(t.thread_id);
  assert.equal(failed.status, "error");
  assert.match(String(failed.error), /answer/, JSON.stringify(failed));
  const res = await client.runs.wait(t.thread_id, "echo", { input: { note: "again" }, raiseError: false });
  assert.equal(typeof res.__error__.message, "string");
  const runs = await client.runs.list(t.thread_id);
  assert.deepEqual(runs.map((r) => r.status), ["error", "error"]);
});

let states;
await check("threads.getState: latest, by checkpoint id, by checkpoint config, subgraphs", async () => {
  const st = await client.threads.getState(thread.thread_id);
  assertState(st, thread.thread_id);
  assert.deepEqual(st.next, []);
  assert.equal(st.values.messages.at(-1).content, "You said: first");
  assert.equal(st.metadata.source, "loop");
  assert.equal(typeof st.metadata.step, "number");
  states = await client.threads.getHistory(thread.thread_id, { limit: 100 });
  const older = states.at(-1);
  const byId = await client.threads.getState(thread.thread_id, older.checkpoint.checkpoint_id);
  assert.equal(byId.checkpoint.checkpoint_id, older.checkpoint.checkpoint_id);
  const byConfig = await client.threads.getState(thread.thread_id, { checkpoint_id: older.checkpoint.checkpoint_id, checkpoint_ns: "" });
  assert.equal(byConfig.checkpoint.checkpoint_id, older.checkpoint.checkpoint_id);
  const sub = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
  assertState(sub, thread.thread_id);
  // The Python SDK sends subgraphs=false.
  const py = await raw("GET", `/threads/${thread.thread_id}/state?subgraphs=false`);
  assert.equal(py.status, 200, py.text);
  await refused(() => client.threads.getState(thread.thread_id, "no-such-checkpoint"), 404);
  await refused(() => client.threads.getState("no-such-thread"), 404);
  const empty = await client.threads.create();
  const es = await client.threads.getState(empty.thread_id);
  assert.deepEqual(es.values, {});
  assert.deepEqual(es.next, []);
});

await check("threads.getHistory: limit, before (id and config), metadata, checkpoint", async () => {
  // graphctl writes a turn's input checkpoint and one per step: 2 for a run of echo.
  assert.ok(states.length >= 2, `history has ${states.length} states`);
  for (const s of states) assertState(s, thread.thread_id);
  const ids = states.map((s) => s.checkpoint.checkpoint_id);
  assert.deepEqual(ids, [...ids].sort().reverse(), "newest first");
  assert.equal((await client.threads.getHistory(thread.thread_id, { limit: 1 })).length, 1);
  const before = await client.threads.getHistory(thread.thread_id, { before: states[0].checkpoint, limit: 100 });
  assert.deepEqual(before.map((s) => s.checkpoint.checkpoint_id), ids.slice(1));
  // The Python SDK may send before as a checkpoint id.
  const beforeId = await raw("POST", `/threads/${thread.thread_id}/history`, { limit: 100, before: ids[0] });
  assert.equal(beforeId.status, 200, beforeId.text);
  assert.deepEqual(beforeId.json.map((s) => s.checkpoint.checkpoint_id), ids.slice(1));
  const inputs = await client.threads.getHistory(thread.thread_id, { metadata: { source: "input" }, limit: 100 });
  assert.ok(inputs.length >= 1 && inputs.every((s) => s.metadata.source === "input"));
  const one = await client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_id: ids[1], checkpoint_ns: "" } });
  assert.deepEqual(one.map((s) => s.checkpoint.checkpoint_id), [ids[1]]);
  await refused(() => client.threads.getHistory(thread.thread_id, { limit: 0 }), 422, "limit");
  await refused(() => client.threads.getHistory("no-such-thread"), 404);
});

await check("threads.updateState: values, asNode, checkpointId, checkpoint; answers a checkpoint", async () => {
  const res = await client.threads.updateState(thread.thread_id, { values: { note: "hello" }, asNode: "answer" });
  assertCheckpoint(res.checkpoint, thread.thread_id);
  const st = await client.threads.getState(thread.thread_id);
  assert.equal(st.values.note, "hello");
  assert.equal(st.checkpoint.checkpoint_id, res.checkpoint.checkpoint_id);
  const old = states.at(-1).checkpoint;
  const fork = await client.threads.updateState(thread.thread_id, { values: { note: "forked" }, checkpointId: old.checkpoint_id });
  assertCheckpoint(fork.checkpoint, thread.thread_id);
  const forked = await client.threads.getState(thread.thread_id, fork.checkpoint.checkpoint_id);
  assert.equal(forked.values.note, "forked");
  assert.equal(forked.parent_checkpoint.checkpoint_id, old.checkpoint_id);
  const fork2 = await client.threads.updateState(thread.thread_id, { values: { note: "forked2" }, checkpoint: { checkpoint_id: old.checkpoint_id, checkpoint_ns: "" } });
  assert.equal((await client.threads.getState(thread.thread_id, fork2.checkpoint.checkpoint_id)).values.note, "forked2");
  await refused(() => client.threads.updateState(thread.thread_id, { values: { note: "x" }, asNode: "nope" }), 400, "nope");
  await refused(() => client.threads.updateState(thread.thread_id, { values: { nope: 1 } }), 400, "nope");
  await refused(() => client.threads.updateState(thread.thread_id, { values: { note: "x" }, checkpointId: "no-such-checkpoint" }), 404);
  await refused(() => client.threads.updateState("no-such-thread", { values: {} }), 404);
});

await check("threads.patchState by id and by config", async () => {
  await client.threads.patchState(thread.thread_id, { reviewed: "yes" });
  assert.equal((await client.threads.getState(thread.thread_id)).metadata.reviewed, "yes");
  await client.threads.patchState({ configurable: { thread_id: thread.thread_id } }, { reviewed: "twice" });
  assert.equal((await client.threads.getState(thread.thread_id)).metadata.reviewed, "twice");
  await refused(() => client.threads.patchState("no-such-thread", { a: 1 }), 404);
});

await check("threads.delete; prune (Python SDK) delete and keep_latest", async () => {
  const t = await client.threads.create();
  await client.threads.delete(t.thread_id);
  await refused(() => client.threads.get(t.thread_id), 404);
  await refused(() => client.threads.delete(t.thread_id), 404);
  const k = await client.threads.create();
  await client.runs.wait(k.thread_id, "echo", { input: hi("one") });
  await client.runs.wait(k.thread_id, "echo", { input: hi("two") });
  const pruned = await raw("POST", "/threads/prune", { thread_ids: [k.thread_id], strategy: "keep_latest" });
  assert.deepEqual(pruned.json, { pruned_count: 1 });
  assert.equal((await client.threads.getHistory(k.thread_id, { limit: 100 })).length, 1);
  assert.equal((await client.threads.getState(k.thread_id)).values.messages.at(-1).content, "You said: two");
  clientError(await raw("POST", "/threads/prune", { thread_ids: [k.thread_id], strategy: "shred" }), 422, "strategy");
  clientError(await raw("POST", "/threads/prune", {}), 422, "thread_ids");
});

await check("threads.joinStream: run_modes (Python's default), lifecycle, state_update", async () => {
  const t = await client.threads.create();
  for (const mode of ["run_modes", "lifecycle", "state_update"]) {
    const ac = new AbortController();
    const res = await fetch(`${apiUrl}/threads/${t.thread_id}/stream?stream_mode=${mode}`, { signal: ac.signal });
    assert.equal(res.status, 200, `${mode}: ${res.status}`);
    assert.match(res.headers.get("content-type"), /text\/event-stream/);
    ac.abort();
  }
});

// ---------------------------------------------------------------------- runs

await check("runs.create on a thread: the Run with the SDK's fields and kwargs", async () => {
  const t = await client.threads.create();
  let created;
  const run = await client.runs.create(t.thread_id, "echo", {
    input: hi("bg"),
    metadata: { who: "cov" },
    config: { tags: ["x"], configurable: { k: "v" }, recursion_limit: 5 },
    context: { user: "ann" },
    streamMode: ["values", "updates"],
    streamSubgraphs: true,
    streamResumable: true,
    multitaskStrategy: "reject",
    ifNotExists: "reject",
    durability: "async",
    onRunCreated: (m) => (created = m),
  });
  assertRun(run);
  assert.equal(run.thread_id, t.thread_id);
  assert.equal(run.assistant_id, "echo");
  assert.equal(run.metadata.who, "cov");
  assert.equal(run.multitask_strategy, "reject");
  assert.deepEqual(created, { run_id: run.run_id, thread_id: t.thread_id });
  await client.runs.join(t.thread_id, run.run_id);
  const done = await client.runs.get(t.thread_id, run.run_id);
  assertRun(done);
  assert.equal(done.status, "success");
  await refused(() => client.runs.create(t.thread_id, "no-such-assistant", { input: hi("x") }), 404, "no-such-assistant");
  await refused(() => client.runs.create(t.thread_id, "echo", { input: { nope: 1 } }), 400, "nope");
});

await check("runs.create ifNotExists: create makes the thread, reject (the default) is a 404", async () => {
  const id = "cov-lazy-thread";
  await refused(() => client.runs.create(id, "echo", { input: hi("x") }), 404, id);
  const run = await client.runs.create(id, "echo", { input: hi("lazy"), ifNotExists: "create" });
  await client.runs.join(id, run.run_id);
  const t = await client.threads.get(id);
  assert.equal(t.values.messages.at(-1).content, "You said: lazy");
  assert.equal(t.metadata.graph_id, "echo");
});

await check("runs.create stateless and createBatch", async () => {
  let created;
  const run = await client.runs.create(null, "echo", { input: hi("stateless"), onRunCreated: (m) => (created = m) });
  assertRun(run);
  assert.equal(created.run_id, run.run_id);
  const batch = await client.runs.createBatch([
    { assistantId: "echo", input: hi("b1") },
    { assistantId: "echo", input: hi("b2"), metadata: { n: 2 } },
  ]);
  assert.equal(batch.length, 2);
  for (const r of batch) assertRun(r);
  assert.equal(batch[1].metadata.n, 2);
  await refused(() => client.runs.createBatch([{ assistantId: "echo", input: hi("ok") }, { assistantId: "nope" }]), 404, "nope");
});

await check("runs.wait: final values; stateless; onCompletion; raiseError", async () => {
  const t = await client.threads.create();
  const values = await client.runs.wait(t.thread_id, "echo", { input: hi("w"), metadata: { m: 1 }, config: { tags: ["t"] } });
  assert.equal(values.messages.at(-1).content, "You said: w");
  const sl = await client.runs.wait(null, "echo", { input: hi("sl") });
  assert.equal(sl.messages.at(-1).content, "You said: sl");
  let kept;
  await client.runs.wait(null, "echo", { input: hi("keep"), onCompletion: "keep", onRunCreated: (m) => (kept = m) });
  assert.equal((await client.threads.get(kept.thread_id)).values.messages.at(-1).content, "You said: keep");
  let gone;
  await client.runs.wait(null, "echo", { input: hi("drop"), onCompletion: "delete", onRunCreated: (m) => (gone = m) });
  assert.ok(gone.run_id);
  if (gone.thread_id) await refused(() => client.threads.get(gone.thread_id), 404);
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), onCompletion: "forget" }), 422, "on_completion");
});

// streamed runs one streaming run of echo in modes, returning its chunks.
const streamed = async (streamMode, extra = {}) => {
  const t = await client.threads.create();
  return collect(client.runs.stream(t.thread_id, "echo", { input: hi("modes"), streamMode, ...extra }));
};
await check("runs.stream in each stream mode sends that mode's events", async () => {
  const want = {
    values: ["values"],
    updates: ["updates"],
    "messages-tuple": ["messages"],
    messages: ["messages/metadata", "messages/complete"],
    debug: ["debug"],
    events: ["events"],
    tasks: ["tasks"],
    checkpoints: ["checkpoints"],
    custom: [],
  };
  for (const [mode, events] of Object.entries(want)) {
    const chunks = await streamed(mode);
    const names = chunks.map((c) => c.event);
    assert.equal(names[0], "metadata", `${mode}: ${names}`);
    assert.ok(names.at(-1) !== "error", `${mode}: ${JSON.stringify(chunks.at(-1))}`);
    for (const e of events) assert.ok(names.includes(e), `${mode}: no ${e} in ${names}`);
    const meta = chunks[0].data;
    assert.match(meta.run_id, uuid);
  }
  const all = await streamed(["values", "updates", "messages-tuple", "custom", "debug", "events", "tasks", "checkpoints"], { streamSubgraphs: true });
  const names = new Set(all.map((c) => c.event));
  for (const e of ["metadata", "values", "updates", "messages", "debug", "events", "tasks", "checkpoints"]) assert.ok(names.has(e), `no ${e} in ${[...names]}`);
  const upd = all.find((c) => c.event === "updates").data;
  assert.equal(upd.answer.messages.at(-1).content, "You said: modes");
  const [msg, meta] = all.find((c) => c.event === "messages").data;
  assert.ok(["ai", "AIMessageChunk"].includes(msg.type), msg.type);
  assert.equal(msg.content, "You said: modes");
  assert.equal(meta.langgraph_node, "answer");
});

await check("debug checkpoints are the history's checkpoints; a failed run's stream ends with an error event", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: hi("dbg"), streamMode: "debug" }));
  const cps = chunks.filter((c) => c.event === "debug" && c.data.type === "checkpoint").map((c) => c.data.payload);
  const history = (await client.threads.getHistory(t.thread_id, { limit: 100 })).reverse();
  const pick3 = (i) => ({ step: i.metadata?.step, checkpoint: i.checkpoint, parent_checkpoint: i.parent_checkpoint });
  assert.deepEqual(cps.map(pick3), history.map(pick3));
  // continuing from the whole checkpoint object history shows
  const more = await collect(client.runs.stream(t.thread_id, "echo", { input: hi("again"), streamMode: "debug", checkpoint: history.at(-1).checkpoint }));
  assert.ok(!more.some((c) => c.event === "error"), JSON.stringify(more.at(-1)));
  const e = await client.threads.create();
  const failed = await collect(client.runs.stream(e.thread_id, "echo", { input: { note: "no messages" }, streamMode: ["debug", "events"] }));
  const last = failed.filter((c) => c.event !== "end").at(-1);
  assert.equal(last.event, "error", JSON.stringify(failed.map((c) => c.event)));
  assert.equal(typeof last.data.error, "string");
  assert.equal(typeof last.data.message, "string");
  const run = (await client.runs.list(e.thread_id))[0];
  assert.equal(run.status, "error");
  const joined = await collect(client.runs.joinStream(e.thread_id, run.run_id));
  assert.ok(joined.length <= 1 || joined.filter((c) => c.event !== "end").at(-1).event === "error", JSON.stringify(joined));
});

await check("runs.stream: interruptBefore/After (lists and *), then continue with null input", async () => {
  // After interruptAfter the state's next holds the nodes after the one
  // that ran: none after echo's last node, so the thread is idle, as on the
  // Agent Server (a thread is interrupted while it has next tasks).
  for (const [opt, next, status] of [
    [{ interruptBefore: ["answer"] }, ["answer"], "interrupted"],
    [{ interruptBefore: "*" }, ["answer"], "interrupted"],
    [{ interruptAfter: ["answer"] }, [], "idle"],
    [{ interruptAfter: "*" }, [], "idle"],
  ]) {
    const t = await client.threads.create();
    const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: hi("stop"), streamMode: ["values", "updates"], ...opt }));
    assert.ok(chunks.some((c) => c.event === "updates" && "__interrupt__" in c.data), `${JSON.stringify(opt)}: ${JSON.stringify(chunks.map((c) => c.event))}`);
    const st = await client.threads.getState(t.thread_id);
    assert.deepEqual(st.next, next, JSON.stringify(opt));
    const th = await client.threads.get(t.thread_id);
    assert.equal(th.status, status, JSON.stringify(opt));
    if (status === "idle") {
      assert.deepEqual(st.interrupts, [], JSON.stringify(opt));
      assert.deepEqual(th.interrupts, {}, JSON.stringify(opt));
    }
    const values = await client.runs.wait(t.thread_id, "echo", { input: null });
    assert.equal(values.messages.at(-1).content, "You said: stop", JSON.stringify(opt));
    assert.equal((await client.threads.get(t.thread_id)).status, "idle");
  }
  const t = await client.threads.create();
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), interruptBefore: ["nope"] }), 422, "nope");
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), interruptAfter: ["nope"] }), 422, "nope");
});

await check("runs.stream with command: resume, goto, update", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "approve", { input: {} });
  const id = first.__interrupt__[0].id;
  const chunks = await collect(client.runs.stream(t.thread_id, "approve", { command: { resume: "yes" }, streamMode: ["values", "updates"] }));
  const final = chunks.filter((c) => c.event === "values").at(-1).data;
  assert.equal(final.approved, "yes");
  assert.equal(final.messages.at(-1).content, "Approved.");
  // resume keyed by interrupt id
  const t2 = await client.threads.create();
  const w2 = await client.runs.wait(t2.thread_id, "approve", { input: {} });
  const v2 = await client.runs.wait(t2.thread_id, "approve", { command: { resume: { [w2.__interrupt__[0].id]: "no" } } });
  assert.equal(v2.messages.at(-1).content, "Declined.");
  assert.ok(id);
  // goto a node, with an update
  const t3 = await client.threads.create();
  const v3 = await client.runs.wait(t3.thread_id, "approve", { command: { goto: "yes", update: { approved: "by goto" } } });
  assert.equal(v3.approved, "by goto");
  assert.equal(v3.messages.at(-1).content, "Approved.");
  // update as [key, value] pairs, goto as a Send
  const t4 = await client.threads.create();
  const v4 = await client.runs.wait(t4.thread_id, "approve", { command: { update: [["approved", "pairs"]], goto: { node: "no", input: {} } } });
  assert.equal(v4.approved, "pairs");
  assert.equal(v4.messages.at(-1).content, "Declined.");
  await refused(() => client.runs.wait(t4.thread_id, "approve", { command: { goto: "nowhere" } }), 422, "nowhere");
  await refused(() => client.runs.wait(t4.thread_id, "approve", { command: { update: { nope: 1 } } }), 400, "nope");
});

await check("runs from a checkpoint: checkpointId and checkpoint fork the thread", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "echo", { input: hi("one") });
  await client.runs.wait(t.thread_id, "echo", { input: hi("two") });
  const history = await client.threads.getHistory(t.thread_id, { limit: 100 });
  const afterOne = history.find((s) => s.next.length === 0 && s.values.messages?.length === 2);
  const v = await client.runs.wait(t.thread_id, "echo", { input: hi("three"), checkpointId: afterOne.checkpoint.checkpoint_id });
  assert.deepEqual(v.messages.map((m) => m.content), ["one", "You said: one", "three", "You said: three"]);
  const v2 = await client.runs.wait(t.thread_id, "echo", { input: hi("four"), checkpoint: { checkpoint_id: afterOne.checkpoint.checkpoint_id, checkpoint_ns: "" } });
  assert.deepEqual(v2.messages.map((m) => m.content), ["one", "You said: one", "four", "You said: four"]);
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), checkpointId: "no-such-checkpoint" }), 404, "no-such-checkpoint");
});

await check("runs.list: limit, offset, status, select; runs.get", async () => {
  const t = await client.threads.create();
  const ids = [];
  for (const text of ["a", "b", "c"]) {
    const r = await client.runs.create(t.thread_id, "echo", { input: hi(text) });
    await client.runs.join(t.thread_id, r.run_id);
    ids.push(r.run_id);
  }
  const all = await client.runs.list(t.thread_id);
  assert.deepEqual(all.map((r) => r.run_id), [...ids].reverse(), "newest first");
  for (const r of all) assertRun(r);
  assert.deepEqual((await client.runs.list(t.thread_id, { limit: 1, offset: 1 })).map((r) => r.run_id), [ids[1]]);
  assert.equal((await client.runs.list(t.thread_id, { status: "success" })).length, 3);
  assert.equal((await client.runs.list(t.thread_id, { status: "error" })).length, 0);
  const sel = await client.runs.list(t.thread_id, { select: ["run_id", "assistant_id"] });
  for (const r of sel) assert.deepEqual(Object.keys(r).sort(), ["assistant_id", "run_id"]);
  // The Python SDK repeats select.
  const py = await raw("GET", `/threads/${t.thread_id}/runs?limit=10&offset=0&select=run_id&select=status`);
  assert.equal(py.status, 200, py.text);
  for (const r of py.json) assert.deepEqual(Object.keys(r).sort(), ["run_id", "status"]);
  assert.equal((await client.runs.get(t.thread_id, ids[0])).run_id, ids[0]);
  await refused(() => client.runs.get(t.thread_id, "00000000-0000-4000-8000-000000000000"), 404);
  await refused(() => client.runs.list("no-such-thread"), 404);
  clientError(await raw("GET", `/threads/${t.thread_id}/runs?limit=ten`), 422, "limit");
  clientError(await raw("GET", `/threads/${t.thread_id}/runs?offset=-1`), 422, "offset");
  clientError(await raw("GET", `/threads/${t.thread_id}/runs?limit=100000`), 422, "limit");
});

await check("multitaskStrategy reject, enqueue, interrupt, rollback on a busy thread; cancel; join; joinStream; delete", async () => {
  const t = await client.threads.create();
  const first = await client.runs.create(t.thread_id, "slow", { input: {} });
  await started(t.thread_id);
  assert.equal((await client.threads.get(t.thread_id)).status, "busy");
  assert.equal((await client.runs.get(t.thread_id, first.run_id)).status, "running");
  await refused(() => client.runs.create(t.thread_id, "slow", { input: {}, multitaskStrategy: "reject" }), 409);
  const queued = await client.runs.create(t.thread_id, "slow", { input: {}, multitaskStrategy: "enqueue" });
  assert.equal(queued.status, "pending");
  assert.equal((await client.runs.list(t.thread_id, { status: "pending" })).length, 1);
  await refused(() => client.runs.delete(t.thread_id, first.run_id), 409);
  // a stream joined while it runs, then released
  const joined = collect(client.runs.joinStream(t.thread_id, first.run_id, { streamMode: ["values"] }));
  await sleep(300); // the join is connected before the run goes on
  release(t.thread_id);
  const frames = await joined;
  assert.ok(frames.some((c) => c.event === "values"), JSON.stringify(frames.map((c) => c.event)));
  const vals = await client.runs.join(t.thread_id, queued.run_id);
  assert.ok(Array.isArray(vals.log), JSON.stringify(vals));
  assert.equal((await client.runs.get(t.thread_id, queued.run_id)).status, "success");

  const t2 = await client.threads.create();
  const a = await client.runs.create(t2.thread_id, "slow", { input: {} });
  await started(t2.thread_id);
  const b = await client.runs.create(t2.thread_id, "slow", { input: {}, multitaskStrategy: "interrupt" });
  await client.runs.join(t2.thread_id, a.run_id);
  release(t2.thread_id);
  await client.runs.join(t2.thread_id, b.run_id);
  assert.equal((await client.runs.get(t2.thread_id, a.run_id)).status, "interrupted");
  assert.equal((await client.runs.get(t2.thread_id, b.run_id)).status, "success");

  const t3 = await client.threads.create();
  const c = await client.runs.create(t3.thread_id, "slow", { input: {} });
  await started(t3.thread_id);
  const d = await client.runs.create(t3.thread_id, "slow", { input: {}, multitaskStrategy: "rollback" });
  release(t3.thread_id);
  await client.runs.join(t3.thread_id, d.run_id);
  assert.equal((await client.runs.get(t3.thread_id, d.run_id)).status, "success");
  assert.deepEqual((await client.threads.getState(t3.thread_id)).values.log, ["work"], "the rolled-back run left nothing");
  await refused(() => client.runs.get(t3.thread_id, c.run_id), 404);

  const t4 = await client.threads.create();
  const e = await client.runs.create(t4.thread_id, "slow", { input: {} });
  await started(t4.thread_id);
  await client.runs.cancel(t4.thread_id, e.run_id, true, "interrupt");
  assert.equal((await client.runs.get(t4.thread_id, e.run_id)).status, "interrupted");
  assert.notEqual((await client.threads.get(t4.thread_id)).status, "busy");
  await client.runs.delete(t4.thread_id, e.run_id);
  await refused(() => client.runs.get(t4.thread_id, e.run_id), 404);
  await refused(() => client.runs.cancel(t4.thread_id, e.run_id), 404);
  await refused(() => client.runs.cancel(t4.thread_id, "00000000-0000-4000-8000-000000000000"), 404);

  // Python's cancel(wait=True) posts ?wait=1 with no body.
  const t5 = await client.threads.create();
  const f = await client.runs.create(t5.thread_id, "slow", { input: {} });
  await started(t5.thread_id);
  const res = await raw("POST", `/threads/${t5.thread_id}/runs/${f.run_id}/cancel?wait=1&action=rollback`);
  assert.ok(res.status === 204 || res.status === 200, res.text);
  await refused(() => client.runs.get(t5.thread_id, f.run_id), 404);
  const bad = await raw("POST", `/threads/${t5.thread_id}/runs/${f.run_id}/cancel?action=explode`);
  clientError(bad, undefined, "action");
});

await check("runs.cancelMany (Python SDK): by run_ids, by status", async () => {
  const t = await client.threads.create();
  const r = await client.runs.create(t.thread_id, "slow", { input: {} });
  await started(t.thread_id);
  const res = await raw("POST", "/runs/cancel?action=interrupt", { thread_id: t.thread_id, run_ids: [r.run_id] });
  assert.equal(res.status, 204, res.text);
  await client.runs.join(t.thread_id, r.run_id);
  assert.equal((await client.runs.get(t.thread_id, r.run_id)).status, "interrupted");
  const t2 = await client.threads.create();
  const r2 = await client.runs.create(t2.thread_id, "slow", { input: {} });
  await started(t2.thread_id);
  assert.equal((await raw("POST", "/runs/cancel", { status: "running" })).status, 204);
  await client.runs.join(t2.thread_id, r2.run_id);
  assert.equal((await client.runs.get(t2.thread_id, r2.run_id)).status, "interrupted");
  clientError(await raw("POST", "/runs/cancel", { status: "sleeping" }), 422, "status");
  clientError(await raw("POST", "/runs/cancel", {}), 422);
});

await check("runs.joinStream: Python's query (cancel_on_disconnect=false, empty stream_mode), lastEventId", async () => {
  const t = await client.threads.create();
  const r = await client.runs.create(t.thread_id, "slow", { input: {}, streamMode: ["values", "updates"] });
  await started(t.thread_id);
  const ac = new AbortController();
  const res = await fetch(`${apiUrl}/threads/${t.thread_id}/runs/${r.run_id}/stream?cancel_on_disconnect=false&stream_mode=`, { signal: ac.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /text\/event-stream/);
  ac.abort();
  release(t.thread_id);
  await client.runs.join(t.thread_id, r.run_id);
  assert.equal((await client.runs.get(t.thread_id, r.run_id)).status, "success");
  const ended = await collect(client.runs.joinStream(t.thread_id, r.run_id, { lastEventId: "-1" }));
  assert.ok(ended.length >= 0);
  await refused(() => collect(client.runs.joinStream(t.thread_id, "00000000-0000-4000-8000-000000000000")), 404);
});

await check("afterSeconds delays the run: pending first, then done", async () => {
  const t = await client.threads.create();
  const r = await client.runs.create(t.thread_id, "echo", { input: hi("later"), afterSeconds: 3 });
  assert.equal(r.status, "pending");
  assert.equal((await client.threads.get(t.thread_id)).status, "busy");
  await client.runs.join(t.thread_id, r.run_id);
  assert.equal((await client.runs.get(t.thread_id, r.run_id)).status, "success");
});

await check("run hints are accepted: feedbackKeys, checkpointDuring, durability, streamResumable, onDisconnect", async () => {
  const t = await client.threads.create();
  for (const opts of [{ feedbackKeys: ["score"] }, { checkpointDuring: false }, { durability: "exit" }, { durability: "sync" }, { streamResumable: true }, { onDisconnect: "continue" }, { onDisconnect: "cancel" }]) {
    const chunks = await collect(client.runs.stream(t.thread_id, "echo", { input: hi("hint"), ...opts }));
    assert.equal(chunks.filter((c) => c.event === "values").at(-1).data.messages.at(-1).content, "You said: hint", JSON.stringify(opts));
  }
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), onDisconnect: "explode" }), 422, "on_disconnect");
  await refused(() => client.runs.wait(t.thread_id, "echo", { input: hi("x"), ifNotExists: "maybe" }), 422, "if_not_exists");
});

// --------------------------------------------------------------------- crons

await check("crons.create, createForThread: the Cron with the SDK's fields", async () => {
  const t = await client.threads.create();
  const c = await client.crons.create("echo", {
    schedule: "0 9 * * *",
    input: hi("cron"),
    metadata: { team: "cov" },
    config: { tags: ["c"] },
    context: { user: "ann" },
    interruptBefore: ["answer"],
    onRunCompleted: "keep",
    multitaskStrategy: "enqueue",
    enabled: true,
    durability: "async",
  });
  assertCron(c);
  assert.equal(c.assistant_id, "echo");
  assert.equal(c.thread_id, null);
  assert.equal(c.schedule, "0 9 * * *");
  assert.equal(c.metadata.team, "cov");
  assert.equal(c.enabled, true);
  assert.equal(c.on_run_completed, "keep");
  assert.ok(isTime(c.next_run_date));
  assert.deepEqual(c.payload.input, hi("cron"));
  const ft = await client.crons.createForThread(t.thread_id, "echo", { schedule: "*/5 * * * *", input: hi("thread cron"), enabled: false });
  assertCron(ft);
  assert.equal(ft.thread_id, t.thread_id);
  assert.equal(ft.enabled, false);
  await refused(() => client.crons.create("echo", { schedule: "every day" }), 422, "schedule");
  await refused(() => client.crons.create("nope", { schedule: "0 9 * * *" }), 404, "nope");
  await refused(() => client.crons.createForThread("no-such-thread", "echo", { schedule: "0 9 * * *" }), 404);
  await refused(() => client.crons.create("echo", { schedule: "0 9 * * *", onRunCompleted: "archive" }), 422, "on_run_completed");
  await refused(() => client.crons.create("echo", { schedule: "0 9 * * *", multitaskStrategy: "bogus" }), 422, "multitask_strategy");
  await client.crons.delete(c.cron_id);
  await client.crons.delete(ft.cron_id);
});

await check("crons.update: schedule, endTime, input, metadata, enabled, onRunCompleted", async () => {
  const c = await client.crons.create("echo", { schedule: "0 9 * * *", input: hi("cron") });
  const end = new Date(Date.now() + 7 * 86400e3).toISOString();
  const up = await client.crons.update(c.cron_id, { schedule: "30 10 * * *", endTime: end, input: hi("changed"), metadata: { v: 2 }, enabled: false, onRunCompleted: "keep" });
  assertCron(up);
  assert.equal(up.schedule, "30 10 * * *");
  assert.equal(Date.parse(up.end_time), Date.parse(end));
  assert.deepEqual(up.payload.input, hi("changed"));
  assert.equal(up.metadata.v, 2);
  assert.equal(up.enabled, false);
  assert.equal(up.on_run_completed, "keep");
  await refused(() => client.crons.update("00000000-0000-4000-8000-000000000000", { enabled: true }), 404);
  await refused(() => client.crons.update(c.cron_id, { schedule: "not a schedule" }), 422, "schedule");
  // The Python SDK clears end_time with null and sends naive ISO times.
  const cleared = await raw("PATCH", `/runs/crons/${c.cron_id}`, { end_time: null });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal(cleared.json.end_time, null);
  const naive = await raw("PATCH", `/runs/crons/${c.cron_id}`, { end_time: "2031-01-02T03:04:05" });
  assert.equal(naive.status, 200, naive.text);
  assert.equal(Date.parse(naive.json.end_time), Date.parse("2031-01-02T03:04:05Z"));
  const tz = await raw("PATCH", `/runs/crons/${c.cron_id}`, { timezone: "Europe/Paris", enabled: true });
  assert.equal(tz.status, 200, tz.text);
  assert.equal(tz.json.timezone, "Europe/Paris");
  clientError(await raw("PATCH", `/runs/crons/${c.cron_id}`, { timezone: "Mars/Olympus" }), 422, "timezone");
  clientError(await raw("PATCH", `/runs/crons/${c.cron_id}`, { end_time: "tomorrow" }), 422);
  await client.crons.delete(c.cron_id);
  await refused(() => client.crons.delete(c.cron_id), 404);
});

await check("crons.search and count: assistantId, threadId, enabled, metadata, limit/offset, sortBy/sortOrder, select", async () => {
  const t = await client.threads.create();
  const made = [];
  made.push(await client.crons.create("echo", { schedule: "0 1 * * *", metadata: { group: "cov-s", k: 1 } }));
  made.push(await client.crons.create("approve", { schedule: "0 2 * * *", metadata: { group: "cov-s", k: 2 } }));
  made.push(await client.crons.createForThread(t.thread_id, "echo", { schedule: "0 3 * * *", metadata: { group: "cov-s", k: 3 }, enabled: false }));
  try {
    const ids = (list) => list.map((c) => c.cron_id).sort();
    assert.deepEqual(ids(await client.crons.search({ assistantId: "echo", limit: 100 })), ids([made[0], made[2]]));
    assert.deepEqual(ids(await client.crons.search({ threadId: t.thread_id })), [made[2].cron_id]);
    assert.deepEqual(ids(await client.crons.search({ enabled: false, limit: 100 })), [made[2].cron_id]);
    for (const c of await client.crons.search({ limit: 100 })) assertCron(c);
    assert.equal((await client.crons.search({ limit: 1, offset: 1 })).length, 1);
    for (const sortBy of ["cron_id", "assistant_id", "created_at", "updated_at", "next_run_date"]) {
      for (const sortOrder of ["asc", "desc"]) sorted(await client.crons.search({ sortBy, sortOrder, limit: 100 }), sortBy, sortOrder);
    }
    const sel = await client.crons.search({ select: ["cron_id", "enabled"], limit: 100 });
    for (const c of sel) assert.deepEqual(Object.keys(c).sort(), ["cron_id", "enabled"]);
    assert.equal(await client.crons.count({ assistantId: "echo" }), 2);
    assert.equal(await client.crons.count({ threadId: t.thread_id }), 1);
    // The Python SDK filters by metadata.
    const byMeta = await raw("POST", "/runs/crons/search", { metadata: { group: "cov-s", k: 2 } });
    assert.equal(byMeta.status, 200, byMeta.text);
    assert.deepEqual(byMeta.json.map((c) => c.cron_id), [made[1].cron_id]);
    const counted = await raw("POST", "/runs/crons/count", { metadata: { group: "cov-s" } });
    assert.equal(counted.json, 3);
    await refused(() => client.crons.search({ sortBy: "schedule" }), 422, "sort_by");
    await refused(() => client.crons.search({ limit: 0 }), 422, "limit");
  } finally {
    for (const c of made) await client.crons.delete(c.cron_id);
  }
});

await check("crons (Python SDK): timezone, end_time, stream fields on create", async () => {
  const res = await raw("POST", "/runs/crons", {
    assistant_id: "echo",
    schedule: "0 9 * * *",
    timezone: "America/New_York",
    end_time: "2031-01-02T03:04:05+00:00",
    stream_mode: ["values"],
    stream_subgraphs: true,
    stream_resumable: false,
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.timezone, "America/New_York");
  assert.equal(Date.parse(res.json.end_time), Date.parse("2031-01-02T03:04:05Z"));
  await client.crons.delete(res.json.cron_id);
  clientError(await raw("POST", "/runs/crons", { assistant_id: "echo", schedule: "0 9 * * *", timezone: "Nowhere/Land" }), 422, "timezone");
});

// --------------------------------------------------------------------- store

await check("store.putItem, getItem (refreshTtl), deleteItem", async () => {
  await client.store.putItem(["cov", "docs"], "a", { title: "Alpha", n: 1 });
  await client.store.putItem(["cov", "docs"], "b", { title: "Beta", n: 2 }, { index: false, ttl: 60 });
  await client.store.putItem(["cov", "notes"], "c", { title: "Gamma", n: 3 }, { index: ["title"] });
  const a = await client.store.getItem(["cov", "docs"], "a");
  assertItem(a);
  assert.deepEqual(a.namespace, ["cov", "docs"]);
  assert.equal(a.key, "a");
  assert.deepEqual(a.value, { title: "Alpha", n: 1 });
  assert.ok(isTime(a.createdAt) && isTime(a.updatedAt));
  const b = await client.store.getItem(["cov", "docs"], "b", { refreshTtl: true });
  assert.equal(b.value.title, "Beta");
  assert.equal(await client.store.getItem(["cov", "docs"], "missing"), null);
  await client.store.deleteItem(["cov", "docs"], "b");
  assert.equal(await client.store.getItem(["cov", "docs"], "b"), null);
  await client.store.putItem(["cov", "docs"], "b", { title: "Beta", n: 2 });
  await refused(() => client.store.putItem([], "k", { x: 1 }), 422, "namespace");
  await refused(() => client.store.putItem(["cov"], "k", { x: 1 }, { ttl: -5 }), 422, "ttl");
  clientError(await raw("PUT", "/store/items", { namespace: ["cov"], key: "k", value: "not an object" }), 422, "value");
  clientError(await raw("PUT", "/store/items", { namespace: ["cov"], key: "k", value: {}, index: "title" }), 422, "index");
  clientError(await raw("GET", "/store/items?namespace=cov.docs"), 422, "key");
});

await check("store.searchItems: prefix, filter, query, limit/offset, refreshTtl", async () => {
  const all = await client.store.searchItems(["cov"], { limit: 100 });
  assert.deepEqual(all.items.map((i) => i.key).sort(), ["a", "b", "c"]);
  for (const it of all.items) assertItem(it);
  const docs = await client.store.searchItems(["cov", "docs"]);
  assert.deepEqual(docs.items.map((i) => i.key).sort(), ["a", "b"]);
  const filtered = await client.store.searchItems(["cov"], { filter: { n: 3 } });
  assert.deepEqual(filtered.items.map((i) => i.key), ["c"]);
  const page = await client.store.searchItems(["cov"], { limit: 1, offset: 1 });
  assert.equal(page.items.length, 1);
  const q = await client.store.searchItems(["cov"], { query: "Gamma", refreshTtl: false });
  assert.ok(Array.isArray(q.items));
  await refused(() => client.store.searchItems(["cov"], { limit: 5000 }), 422, "limit");
  await refused(() => client.store.searchItems(["cov"], { offset: -2 }), 422, "offset");
});

await check("store.listNamespaces: prefix, suffix, maxDepth, limit/offset", async () => {
  const all = await client.store.listNamespaces({ prefix: ["cov"] });
  assert.deepEqual(all.namespaces.map((n) => n.join(".")).sort(), ["cov.docs", "cov.notes"]);
  assert.deepEqual((await client.store.listNamespaces({ suffix: ["notes"] })).namespaces, [["cov", "notes"]]);
  assert.deepEqual((await client.store.listNamespaces({ prefix: ["cov"], maxDepth: 1 })).namespaces, [["cov"]]);
  assert.equal((await client.store.listNamespaces({ prefix: ["cov"], limit: 1 })).namespaces.length, 1);
  assert.equal((await client.store.listNamespaces({ prefix: ["cov"], offset: 1 })).namespaces.length, 1);
  await refused(() => client.store.listNamespaces({ maxDepth: -1 }), 422, "max_depth");
  await refused(() => client.store.listNamespaces({ limit: 0 }), 422, "limit");
});

// ------------------------------------------------------------------- hostile

await check("malformed JSON bodies are 400 JSON errors on every POST, PUT and PATCH route", async () => {
  const t = await client.threads.create();
  const c = await client.crons.create("echo", { schedule: "0 9 * * *" });
  const routes = [
    ["POST", "/assistants"], ["POST", "/assistants/search"], ["POST", "/assistants/count"], ["PATCH", "/assistants/echo"],
    ["POST", "/assistants/echo/versions"], ["POST", "/assistants/echo/latest"],
    ["POST", "/threads"], ["POST", "/threads/search"], ["POST", "/threads/count"], ["POST", "/threads/prune"],
    ["PATCH", `/threads/${t.thread_id}`], ["PATCH", `/threads/${t.thread_id}/state`], ["POST", `/threads/${t.thread_id}/state`],
    ["POST", `/threads/${t.thread_id}/state/checkpoint`], ["POST", `/threads/${t.thread_id}/history`],
    ["POST", `/threads/${t.thread_id}/runs`], ["POST", `/threads/${t.thread_id}/runs/stream`], ["POST", `/threads/${t.thread_id}/runs/wait`],
    ["POST", `/threads/${t.thread_id}/runs/crons`], ["POST", "/runs/crons"], ["POST", "/runs/crons/search"], ["POST", "/runs/crons/count"],
    ["PATCH", `/runs/crons/${c.cron_id}`], ["POST", "/runs/batch"], ["POST", "/runs/cancel"], ["POST", "/runs"], ["POST", "/runs/stream"], ["POST", "/runs/wait"],
    ["PUT", "/store/items"], ["DELETE", "/store/items"], ["POST", "/store/items/search"], ["POST", "/store/namespaces"],
  ];
  for (const [method, path] of routes) {
    for (const body of ['{"limit": ', "{'a': 1}", "[1, 2", "nul", '{"a":1}{"b":2}']) {
      const res = await raw(method, path, body);
      try {
        clientError(res, [400, 422]);
      } catch (e) {
        throw new Error(`${method} ${path} ${JSON.stringify(body)}: ${e.message}`);
      }
    }
  }
  await client.crons.delete(c.cron_id);
});

await check("wrong JSON types are 422 naming the field, never 500", async () => {
  const t = await client.threads.create();
  const cases = [
    ["POST", "/assistants/search", { limit: "ten" }, "limit"],
    ["POST", "/assistants/search", { metadata: "team" }, "metadata"],
    ["POST", "/assistants/search", { select: "name" }, "select"],
    ["POST", "/assistants", { graph_id: 5 }, "graph_id"],
    ["POST", "/assistants", { graph_id: "echo", config: [] }, "config"],
    ["POST", "/assistants/echo/latest", { version: "one" }, "version"],
    ["POST", "/threads", { thread_id: 5 }, "thread_id"],
    ["POST", "/threads", { metadata: [] }, "metadata"],
    ["POST", "/threads/search", { ids: "abc" }, "ids"],
    ["POST", "/threads/search", { offset: 1.5 }, "offset"],
    ["POST", "/threads/search", { status: 3 }, "status"],
    ["POST", "/threads/count", { values: 3 }, "values"],
    ["PATCH", `/threads/${t.thread_id}`, { metadata: "x" }, "metadata"],
    ["POST", `/threads/${t.thread_id}/history`, { limit: "all" }, "limit"],
    ["POST", `/threads/${t.thread_id}/state`, { values: "x" }, "values"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", input: "hello" }, "input"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: 7 }, "assistant_id"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", stream_mode: 5 }, "stream_mode"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", config: "x" }, "config"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", metadata: [1] }, "metadata"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", interrupt_before: 3 }, "interrupt_before"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", command: "resume" }, "command"],
    ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "echo", after_seconds: "soon" }, "after_seconds"],
    ["POST", "/runs/batch", { assistant_id: "echo" }, "body"],
    ["POST", "/runs/crons", { assistant_id: "echo", schedule: 5 }, "schedule"],
    ["POST", "/runs/crons/search", { enabled: "yes" }, "enabled"],
    ["PUT", "/store/items", { namespace: "cov", key: "k", value: {} }, "namespace"],
    ["POST", "/store/items/search", { namespace_prefix: ["cov"], filter: [] }, "filter"],
    ["POST", "/store/namespaces", { max_depth: "deep" }, "max_depth"],
  ];
  for (const [method, path, body, what] of cases) {
    const res = await raw(method, path, body);
    try {
      clientError(res, 422, what);
    } catch (e) {
      throw new Error(`${method} ${path} ${JSON.stringify(body)}: ${e.message}`);
    }
  }
});

await check("unknown ids are 404 JSON errors", async () => {
  const t = await client.threads.create();
  const nid = "00000000-0000-4000-8000-000000000000";
  for (const [method, path, body] of [
    ["GET", `/threads/${nid}`], ["PATCH", `/threads/${nid}`, {}], ["DELETE", `/threads/${nid}`], ["POST", `/threads/${nid}/copy`],
    ["GET", `/threads/${nid}/state`], ["POST", `/threads/${nid}/state`, { values: {} }], ["POST", `/threads/${nid}/history`, {}],
    ["GET", `/threads/${nid}/runs`], ["POST", `/threads/${nid}/runs/wait`, { assistant_id: "echo" }],
    ["GET", `/threads/${t.thread_id}/runs/${nid}`], ["GET", `/threads/${t.thread_id}/runs/${nid}/join`], ["POST", `/threads/${t.thread_id}/runs/${nid}/cancel`],
    ["DELETE", `/threads/${t.thread_id}/runs/${nid}`], ["GET", `/assistants/${nid}`], ["PATCH", `/assistants/${nid}`, {}], ["DELETE", `/assistants/${nid}`],
    ["GET", `/assistants/${nid}/graph`], ["POST", `/assistants/${nid}/versions`, {}], ["POST", `/assistants/${nid}/latest`, { version: 1 }],
    ["PATCH", `/runs/crons/${nid}`, {}], ["DELETE", `/runs/crons/${nid}`], ["GET", "/no/such/route"],
  ]) {
    const res = await raw(method, path, body);
    try {
      clientError(res, 404);
    } catch (e) {
      throw new Error(`${method} ${path}: ${e.message}`);
    }
  }
});

await check("paging out of range is 422 on every list", async () => {
  const t = await client.threads.create();
  for (const [path, limitName] of [
    ["/assistants/search", "limit"], ["/threads/search", "limit"], ["/runs/crons/search", "limit"], ["/store/items/search", "limit"],
    ["/store/namespaces", "limit"], ["/assistants/echo/versions", "limit"], [`/threads/${t.thread_id}/history`, "limit"],
  ]) {
    for (const body of [{ [limitName]: 1e9 }, { [limitName]: -1 }, { offset: -5 }, { [limitName]: 1e300 }]) {
      if (path.endsWith("/history") && "offset" in body) continue;
      const res = await raw("POST", path, body);
      try {
        clientError(res, 422);
      } catch (e) {
        throw new Error(`POST ${path} ${JSON.stringify(body)}: ${e.message}`);
      }
    }
  }
});

await check("a webhook receives the finished run (runs.create webhook)", async () => {
  const calls = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      calls.push(JSON.parse(body));
      res.end("ok");
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "echo", { input: hi("hook"), webhook: `http://127.0.0.1:${receiver.address().port}/h` });
    for (let i = 0; i < 200 && calls.length === 0; i++) await sleep(50);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].run_id, run.run_id);
    assert.equal(calls[0].status, "success");
  } finally {
    receiver.close();
  }
});

if (failures.length) {
  console.error(`\n${failures.length} failed:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
console.log("all checks passed");
