// A picture uploaded in agent-chat-ui reaches the model: the image content
// blocks its composer sends (LangChain's standard blocks), through the
// official client: node chatui-image.mjs http://127.0.0.1:PORT
// Graph: assistant (one llm node); the Go test checks what the model got.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { collect, step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node chatui-image.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl, apiKey: process.env.GRAPHCTL_TEST_KEY || null });
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const submitOptions = { streamMode: ["values", "messages-tuple", "custom"], streamSubgraphs: true, streamResumable: true, onDisconnect: "continue" };

const thread = await client.threads.create({ metadata: {} });
const send = async (name, block) => {
  const message = { id: name, type: "human", content: [{ type: "text", text: `picture ${name}` }, block] };
  const chunks = await collect(client.runs.stream(thread.thread_id, "assistant", { input: { messages: [message] }, ...submitOptions }));
  return { chunks, message };
};

for (const [name, block] of [
  ["base64", { type: "image", mimeType: "image/png", data: png, metadata: { name: "dot.png" } }],
  ["source_type", { type: "image", source_type: "base64", mime_type: "image/png", data: png }],
  ["url", { type: "image", url: "https://example.com/dot.png" }],
]) {
  await step(`an image block (${name}) reaches the model and is kept in the thread as sent`, async () => {
    const { chunks, message } = await send(name, block);
    assert.ok(!chunks.some((c) => c.event === "error"), `error frames: ${JSON.stringify(chunks.filter((c) => c.event === "error"))}`);
    const messages = chunks.filter((c) => c.event === "values").at(-1).data.messages;
    const stored = messages.find((m) => m.id === name);
    assert.deepEqual(stored.content, message.content);
    assert.equal(messages.at(-1).type, "ai");
  });
}

await step("a file block the model cannot read fails the run naming the part", async () => {
  const { chunks } = await send("pdf", { type: "file", mimeType: "application/pdf", data: "JVBERi0=", metadata: { filename: "a.pdf" } });
  const err = chunks.find((c) => c.event === "error");
  assert.ok(err, `no error frame: ${JSON.stringify(chunks)}`);
  assert.match(JSON.stringify(err.data), /content part 1: unknown type file/);
});
