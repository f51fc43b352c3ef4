// Drives a tool-using agent graph served by graphctl with the official
// @langchain/langgraph-sdk client and checks that its MCP tool calls look
// as LangGraph shows them (what agent-chat-ui renders): an AI message with
// tool_calls, then one tool message per call with its tool_call_id.
// node mcp-tools.mjs http://127.0.0.1:PORT
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { step } from "./steps.mjs";

const apiUrl = process.argv[2];
if (!apiUrl) {
  console.error("usage: node mcp-tools.mjs URL");
  process.exit(2);
}
const client = new Client({ apiUrl });

const checkConversation = (messages) => {
  assert.deepEqual(messages.map((m) => m.type), ["human", "ai", "tool", "tool", "ai"], JSON.stringify(messages));
  const ai = messages[1];
  assert.equal(ai.tool_calls.length, 2);
  assert.deepEqual(ai.tool_calls.map((c) => c.name), ["weather__whoami", "calc__add"]);
  assert.deepEqual(ai.tool_calls[1].args, { a: 2, b: 40 });
  for (const c of ai.tool_calls) {
    assert.equal(c.type, "tool_call");
    assert.ok(c.id, "a tool call has an id");
  }
  const [t1, t2] = [messages[2], messages[3]];
  assert.equal(t1.tool_call_id, ai.tool_calls[0].id);
  assert.equal(t1.name, "weather__whoami");
  assert.equal(t1.content, "weather-server");
  assert.equal(t2.tool_call_id, ai.tool_calls[1].id);
  assert.equal(t2.content, "42");
  assert.equal(t2.status, "success");
  assert.equal(messages[4].content, "The weather server answered; 2 + 40 = 42.");
};

let thread;
await step("create thread", async () => {
  thread = await client.threads.create();
});

let streamed;
await step("stream a run with MCP tool calls", async () => {
  const updates = [];
  for await (const chunk of client.runs.stream(thread.thread_id, "agent", {
    input: { messages: [{ type: "human", content: "who answers, and what is 2 + 40?" }] },
    streamMode: ["values", "updates"],
  })) {
    if (chunk.event === "values") streamed = chunk.data;
    if (chunk.event === "updates") updates.push(chunk.data);
  }
  checkConversation(streamed.messages);
  // The agent's update carries its tool calls, the tools node's update the answers.
  const agent = updates.find((u) => u.agent && u.agent.messages && u.agent.messages.some((m) => m.tool_calls && m.tool_calls.length));
  assert.ok(agent, `updates: ${JSON.stringify(updates)}`);
  const tools = updates.find((u) => u.tools && u.tools.messages);
  assert.ok(tools && tools.tools.messages.every((m) => m.type === "tool"), `updates: ${JSON.stringify(updates)}`);
});

await step("thread state holds the same conversation", async () => {
  const state = await client.threads.getState(thread.thread_id);
  checkConversation(state.values.messages);
});

await step("messages-tuple stream shows the tool calls and tool messages", async () => {
  const t = await client.threads.create();
  const byId = new Map();
  for await (const chunk of client.runs.stream(t.thread_id, "agent", {
    input: { messages: [{ type: "human", content: "who answers, and what is 2 + 40?" }] },
    streamMode: "messages-tuple",
  })) {
    if (chunk.event !== "messages") continue;
    const [msg, meta] = chunk.data;
    assert.ok(msg.id, `a streamed message has an id: ${JSON.stringify(msg)}`);
    assert.ok(meta.langgraph_node, "metadata names the node");
    // Merge chunks as a client does: content appended, tool_call_chunks by index.
    const prev = byId.get(msg.id) ?? { ...msg, content: "", tool_call_chunks: [] };
    prev.content += typeof msg.content === "string" ? msg.content : "";
    for (const c of msg.tool_call_chunks ?? []) {
      const at = prev.tool_call_chunks.find((p) => p.index === c.index);
      if (at) at.args += c.args ?? "";
      else prev.tool_call_chunks.push({ ...c });
    }
    if (msg.tool_calls?.length) prev.tool_calls = msg.tool_calls;
    byId.set(msg.id, prev);
  }
  const state = await client.threads.getState(t.thread_id);
  const [, ai, tool1, tool2, answer] = state.values.messages;
  const streamedAI = byId.get(ai.id);
  assert.ok(streamedAI, `the tool-calling message is streamed under its state id ${ai.id}: ${JSON.stringify([...byId.keys()])}`);
  assert.equal(streamedAI.type, "AIMessageChunk");
  assert.deepEqual(
    streamedAI.tool_call_chunks.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args) })),
    ai.tool_calls.map((c) => ({ id: c.id, name: c.name, args: c.args })),
  );
  assert.deepEqual(streamedAI.tool_calls.map((c) => c.id), ai.tool_calls.map((c) => c.id));
  for (const [tm, call] of [[tool1, ai.tool_calls[0]], [tool2, ai.tool_calls[1]]]) {
    const streamedTool = byId.get(tm.id);
    assert.ok(streamedTool, `tool message ${tm.id} is streamed`);
    assert.equal(streamedTool.type, "tool");
    assert.equal(streamedTool.tool_call_id, call.id);
    assert.equal(streamedTool.content, tm.content);
  }
  assert.equal(byId.get(answer.id)?.content, answer.content);
});
