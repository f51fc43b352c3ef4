// The MCP endpoint with the official TypeScript client, driven by
// mcp_test.go:  node mcp.spec.mjs SCENARIO BASE_URL OUT_DIR GRAPHS_DIR [KEY]
// Lists the tools, calls the slot-filling tool twice on one thread, hits an
// interrupt and resumes it; prints "RESULT {json}".
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [scenario, base, , , key] = process.argv.slice(2);

function check(cond, msg) {
  if (!cond) throw new Error('check failed: ' + msg);
}

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

async function main() {
  check(scenario === 'tools', 'unknown scenario ' + scenario);
  const opts = key ? { requestInit: { headers: { Authorization: 'Bearer ' + key } } } : {};
  const transport = new StreamableHTTPClientTransport(new URL(base + '/mcp'), opts);
  const client = new Client({ name: 'graphctl-ts-test', version: '1.0.0' });
  await client.connect(transport);
  const info = client.getServerVersion();
  check(info && info.name === 'graphctl', 'server is graphctl: ' + JSON.stringify(info));

  const { tools } = await client.listTools();
  const sf = tools.find((t) => t.name === 'slot_filling');
  check(sf && tools.some((t) => t.name === 'refund'), 'tools: ' + tools.map((t) => t.name));
  check(JSON.stringify(sf.inputSchema.properties.goal.enum) === '["install_instruction","check_compatibility","diagnose_repair"]', 'goal enum kept');
  check(sf.inputSchema.properties.thread_id && sf.inputSchema.properties.message, 'thread_id and message arguments');

  const progress = [];
  const first = await client.callTool({ name: 'slot_filling', arguments: { message: 'My dishwasher WDT780SAEM1 is leaking' } }, undefined,
    { onprogress: (p) => progress.push(p.message) });
  check(!first.isError && text(first).includes('What would you like to do?'), 'first reply: ' + text(first));
  const thread = first.structuredContent.thread_id;
  check(thread && first.structuredContent.status === 'completed', 'first call status');
  check(progress.some((m) => /node extract finished/.test(m)), 'progress notifications: ' + JSON.stringify(progress));

  const second = await client.callTool({ name: 'slot_filling', arguments: { thread_id: thread, message: 'I want to fix it' } });
  check(!second.isError && text(second).includes('diagnose_repair'), 'second reply: ' + text(second));
  check(second.structuredContent.values.model === 'WDT780SAEM1', 'the thread remembers the model');

  const asked = await client.callTool({ name: 'refund', arguments: { message: 'invoice 7' } });
  check(!asked.isError && asked.structuredContent.status === 'interrupted', 'refund interrupted: ' + text(asked));
  check(text(asked).includes('Approve a refund for: invoice 7?'), 'the question is in the result: ' + text(asked));
  const refundThread = asked.structuredContent.thread_id;
  const answered = await client.callTool({ name: 'refund', arguments: { thread_id: refundThread, resume: 'no' } });
  check(!answered.isError && text(answered).includes('Sorry, the refund was declined.'), 'resumed: ' + text(answered));

  const bad = await client.callTool({ name: 'refund', arguments: { resume: 'no' } });
  check(bad.isError && text(bad).includes('thread_id'), 'resume without a thread is a tool error: ' + text(bad));
  await client.close();
  console.log('RESULT ' + JSON.stringify({ thread_id: thread, refund_thread_id: refundThread, progress: progress.length }));
}

main().catch((e) => { console.log(e.stack || String(e)); process.exit(1); });
