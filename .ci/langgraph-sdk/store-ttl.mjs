// One read of a store item through the official @langchain/langgraph-sdk
// client, with or without refreshTtl, for a Go test that looks at the
// item's expiry in the store before and after (the API does not show it).
// node store-ttl.mjs http://127.0.0.1:PORT get|get-no-refresh|search|search-no-refresh
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step } from "./steps.mjs";

const [apiUrl, op] = process.argv.slice(2);
if (!apiUrl || !op) {
  console.error("usage: node store-ttl.mjs URL get|get-no-refresh|search|search-no-refresh");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
const ns = ["mem", "u1"];

await step(`store read: ${op}`, async () => {
  switch (op) {
    case "get":
      assert.equal((await client.store.getItem(ns, "k")).value.text, "note");
      break;
    case "get-no-refresh":
      assert.equal((await client.store.getItem(ns, "k", { refreshTtl: false })).value.text, "note");
      break;
    case "search":
      assert.deepEqual((await client.store.searchItems(["mem"], { refreshTtl: true })).items.map((it) => it.key).sort(), ["k", "kept"]);
      break;
    case "search-no-refresh":
      assert.deepEqual((await client.store.searchItems(["mem"], { refreshTtl: false })).items.map((it) => it.key).sort(), ["k", "kept"]);
      break;
    default:
      throw new Error(`unknown read ${op}`);
  }
});
