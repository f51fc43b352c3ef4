// A thread's stream (GET /threads/{id}/stream) in each of its modes through
// the official @langchain/langgraph-sdk client: run_modes (the runs'
// frames), lifecycle (each run's start and end) and state_update (each
// update of the thread's state), alone and together, rejoined with
// Last-Event-ID, and refused with a 4xx naming what is wrong.
// node threadstream.mjs http://127.0.0.1:PORT (graphs: echo)
import assert from "node:assert/strict";
import { step, collect, refused, watchedClient } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node threadstream.mjs URL");
  process.exit(2);
}
const { client, nextStreamOpen } = watchedClient(apiUrl);
const hi = (text) => ({ messages: [{ role: "user", content: text }] });

// open reads a thread stream in the background until it has seen the
// frames until(chunks) asks for, or until stop().
const open = async (threadId, options, until) => {
  const ac = new AbortController();
  const chunks = [];
  const opened = nextStreamOpen();
  const reading = (async () => {
    try {
      for await (const chunk of client.threads.joinStream(threadId, { ...options, signal: ac.signal })) {
        chunks.push(chunk);
        if (until(chunks)) ac.abort();
      }
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    }
    return chunks;
  })();
  const res = await opened;
  assert.equal(res.status, 200, `thread stream: HTTP ${res.status}`);
  return {
    // read waits for the frames; a stream that never sees them is stopped
    // after 10s and its frames so far fail the caller's assertions.
    read: async () => {
      const timer = setTimeout(() => ac.abort(), 10000);
      const got = await reading;
      clearTimeout(timer);
      return got;
    },
  };
};
const count = (event, n) => (chunks) => chunks.filter((c) => c.event === event).length === n;

await step("mode state_update streams each threads.updateState, and no run frames", async () => {
  const t = await client.threads.create();
  const stream = await open(t.thread_id, { streamMode: "state_update" }, count("state_update", 2));
  await client.runs.wait(t.thread_id, "echo", { input: hi("before") });
  const first = await client.threads.updateState(t.thread_id, { values: { note: "one" }, asNode: "answer" });
  const second = await client.threads.updateState(t.thread_id, { values: { note: "two" } });
  const chunks = await stream.read();
  assert.deepEqual(chunks.map((c) => c.event), ["state_update", "state_update"], JSON.stringify(chunks));
  const [a, b] = chunks.map((c) => c.data);
  assert.equal(a.thread_id, t.thread_id);
  assert.deepEqual(a.values, { note: "one" });
  assert.equal(a.as_node, "answer");
  assert.equal(a.checkpoint.checkpoint_id, first.checkpoint.checkpoint_id);
  assert.equal(a.checkpoint.thread_id, t.thread_id);
  assert.deepEqual(b.values, { note: "two" });
  assert.equal(b.checkpoint.checkpoint_id, second.checkpoint.checkpoint_id);
  assert.ok(!("as_node" in b), JSON.stringify(b));
  assert.equal((await client.threads.getState(t.thread_id)).values.note, "two");
});

await step("modes lifecycle and state_update together: a run's start and end, then the update", async () => {
  const t = await client.threads.create();
  const stream = await open(t.thread_id, { streamMode: ["lifecycle", "state_update"] }, count("state_update", 1));
  const run = await client.runs.create(t.thread_id, "echo", { input: hi("life"), streamMode: ["values"] });
  await client.runs.join(t.thread_id, run.run_id);
  const update = await client.threads.updateState(t.thread_id, { values: { note: "after" } });
  const chunks = await stream.read();
  assert.deepEqual(chunks.map((c) => c.event), ["metadata", "run_done", "state_update"], JSON.stringify(chunks));
  assert.equal(chunks[1].data.run_id, run.run_id);
  assert.equal(chunks[2].data.checkpoint.checkpoint_id, update.checkpoint.checkpoint_id);
});

await step("mode run_modes (the default) streams the runs and no state updates", async () => {
  const t = await client.threads.create();
  const stream = await open(t.thread_id, {}, count("run_done", 1));
  await client.threads.updateState(t.thread_id, { values: { note: "unseen" } });
  const run = await client.runs.create(t.thread_id, "echo", { input: hi("seen"), streamMode: ["values"] });
  await client.runs.join(t.thread_id, run.run_id);
  const events = (await stream.read()).map((c) => c.event);
  assert.ok(!events.includes("state_update"), JSON.stringify(events));
  assert.equal(events[0], "metadata");
  assert.ok(events.includes("values"), JSON.stringify(events));
  assert.equal(events.at(-1), "run_done");
});

await step("a stream rejoined after a state_update frame (Last-Event-ID) goes on with the next update", async () => {
  const t = await client.threads.create();
  const before = await open(t.thread_id, { streamMode: "state_update" }, count("state_update", 1));
  await client.threads.updateState(t.thread_id, { values: { note: "first" } });
  const [seen] = await before.read();
  assert.match(seen.id, /^state_update:/);
  const after = await open(t.thread_id, { streamMode: "state_update", lastEventId: seen.id }, count("state_update", 1));
  const next = await client.threads.updateState(t.thread_id, { values: { note: "second" } });
  const chunks = await after.read();
  assert.deepEqual(chunks.map((c) => c.data.checkpoint.checkpoint_id), [next.checkpoint.checkpoint_id]);
});

await step("the modes as the Python SDK and raw clients send them (stream_modes, comma lists)", async () => {
  const t = await client.threads.create();
  for (const query of ["stream_mode=state_update", "stream_modes=state_update", "stream_mode=lifecycle,state_update", "stream_mode=run_modes&stream_mode=state_update"]) {
    const ac = new AbortController();
    const res = await fetch(`${apiUrl}/threads/${t.thread_id}/stream?${query}`, { signal: ac.signal });
    assert.equal(res.status, 200, `${query}: ${res.status}`);
    assert.match(res.headers.get("content-type"), /text\/event-stream/);
    ac.abort();
  }
});

await step("hostile thread streams are refused with a 4xx naming what is wrong", async () => {
  const t = await client.threads.create();
  await refused(() => collect(client.threads.joinStream(t.thread_id, { streamMode: "state_updates" })), 422, "state_update");
  await refused(() => collect(client.threads.joinStream(t.thread_id, { streamMode: ["state_update", "values"] })), 422, "stream_mode");
  await refused(() => collect(client.threads.joinStream(t.thread_id, { lastEventId: "not-an-id" })), 422, "Last-Event-ID");
  await refused(() => collect(client.threads.joinStream(t.thread_id, { lastEventId: "run:-3" })), 422, "Last-Event-ID");
  await refused(() => collect(client.threads.joinStream("00000000-0000-4000-8000-000000000000", { streamMode: "state_update" })), 404, "not found");
  await refused(() => client.threads.updateState(t.thread_id, { values: { nope: 1 } }), 400);
});
