// Thread TTLs through the official @langchain/langgraph-sdk client: a ttl
// given on threads.create (minutes, or {strategy, ttl}) or threads.update is
// recorded on the thread, and the thread is deleted once it has passed.
// node ttl.mjs http://127.0.0.1:PORT (a server sweeping often)
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node ttl.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl });

const gone = async (id) => {
  const deadline = Date.now() + 60000;
  for (;;) {
    try {
      await client.threads.get(id);
    } catch (err) {
      if (err.status === 404) return;
      throw err;
    }
    assert.ok(Date.now() < deadline, `thread ${id} is still there after its ttl`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

let kept;
await step("a ttl on threads.create is recorded on the thread", async () => {
  kept = await client.threads.create({ ttl: { strategy: "delete", ttl: 60 } });
  const got = await client.threads.get(kept.thread_id);
  assert.equal(got.ttl.strategy, "delete");
  assert.equal(got.ttl.ttl, 60);
  assert.ok(Date.parse(got.ttl.expires_at) > Date.now());
});

await step("a thread created with a short ttl (minutes) is deleted once it passes", async () => {
  const t = await client.threads.create({ ttl: 0.002 });
  await gone(t.thread_id);
});

await step("a ttl set by threads.update deletes the thread too", async () => {
  const t = await client.threads.create({ metadata: { kind: "later" } });
  await client.threads.update(t.thread_id, { ttl: 0.002 });
  await gone(t.thread_id);
});

await step("a thread whose ttl has not passed stays", async () => {
  const got = await client.threads.get(kept.thread_id);
  assert.equal(got.thread_id, kept.thread_id);
});
