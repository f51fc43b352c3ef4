// What the SDK scripts share: named steps that stop the script at the first
// failure, collecting a stream, and asserting a refusal.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";

// step runs fn, printing "ok   NAME", or the failure and exits 1.
export const step = async (name, fn) => {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}: ${err.stack || err}`);
    process.exit(1);
  }
};

// collect reads a stream's chunks into an array.
export const collect = async (gen) => {
  const out = [];
  for await (const chunk of gen) out.push(chunk);
  return out;
};

// refused asserts that fn fails with HTTP status and a JSON error with a
// detail, naming what when it is given.
export const refused = async (fn, status, what) => {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected HTTP ${status} naming ${what}, got success`);
  assert.equal(err.status, status, String(err));
  if (what) assert.match(String(err.message), new RegExp(what), String(err));
  const body = JSON.parse(String(err.message).replace(/^HTTP \d+: /, ""));
  assert.ok(typeof body.detail === "string" && body.detail, `error body ${err.message} has no detail`);
};

// watchedClient is an SDK client for apiUrl whose nextStreamOpen() resolves
// at the response of the next thread stream request (GET .../stream): the
// server watches the thread once it has answered.
export const watchedClient = (apiUrl) => {
  let streamOpened = () => {};
  const fetchWatched = async (url, init) => {
    const res = await fetch(url, init);
    if (init?.method === "GET" && new URL(url).pathname.endsWith("/stream")) streamOpened(res);
    return res;
  };
  const client = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0, fetch: fetchWatched } });
  return { client, nextStreamOpen: () => new Promise((resolve) => (streamOpened = resolve)) };
};
