// A chat page as LangGraph users build them: the official SDK's React
// useStream against an Agent Server on another origin (?api=URL). It sends
// messages, answers interrupts, regenerates an answer from its parent
// checkpoint (as agent-chat-ui does) and lists the assistant's threads.
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { useStream } from "@langchain/langgraph-sdk/react";

const params = new URLSearchParams(location.search);
const apiUrl = params.get("api");
const assistantId = params.get("assistant") || "assistant";

const textOf = (content) =>
  typeof content === "string" ? content : (content ?? []).map((p) => (typeof p === "string" ? p : p.text ?? "")).join("");

function Message({ stream, message, index }) {
  const meta = stream.getMessagesMetadata(message, index);
  const parent = meta?.firstSeenState?.parent_checkpoint;
  return (
    <li data-testid="message" data-type={message.type} data-id={message.id} data-branches={meta?.branchOptions?.length ?? 0}>
      <span data-testid="text">{textOf(message.content)}</span>
      {message.type === "ai" && parent && (
        <button data-testid="regenerate" onClick={() => stream.submit(undefined, { checkpoint: parent, streamMode: ["values"] })}>
          Regenerate
        </button>
      )}
    </li>
  );
}

function App() {
  const [threadId, setThreadId] = useState(null);
  const [threads, setThreads] = useState(null);
  const [text, setText] = useState("");
  const stream = useStream({ apiUrl, assistantId, threadId, onThreadId: setThreadId, fetchStateHistory: true });

  const send = () => {
    const message = { type: "human", content: text, id: crypto.randomUUID() };
    setText("");
    stream.submit(
      { messages: [message] },
      { optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), message] }) },
    );
  };
  const listThreads = async () => setThreads(await stream.client.threads.search({ metadata: { graph_id: assistantId }, limit: 50 }));
  const interrupt = stream.interrupt;

  return (
    <main data-testid="app" data-thread-id={threadId ?? ""} data-loading={String(stream.isLoading)}>
      <ul data-testid="messages">
        {stream.messages.map((m, i) => (
          <Message key={m.id ?? i} stream={stream} message={m} index={i} />
        ))}
      </ul>
      {interrupt && !stream.isLoading && (
        <div data-testid="interrupt">
          <span>{interrupt.value?.message}</span>
          <button data-testid="approve" onClick={() => stream.submit(undefined, { command: { resume: "yes" } })}>Yes</button>
        </div>
      )}
      {stream.error && <p data-testid="error">{String(stream.error?.message ?? stream.error)}</p>}
      <input data-testid="input" value={text} onChange={(e) => setText(e.target.value)} />
      <button data-testid="send" onClick={send} disabled={stream.isLoading || !text}>Send</button>
      <button data-testid="list-threads" onClick={listThreads}>Threads</button>
      {threads && (
        <ul data-testid="threads">
          {threads.map((t) => (
            <li key={t.thread_id} data-testid="thread" data-thread-id={t.thread_id} data-status={t.status}>{t.thread_id}</li>
          ))}
        </ul>
      )}
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
