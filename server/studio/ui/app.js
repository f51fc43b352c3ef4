// graphctl Studio: see a graph, run it, inspect and time-travel its threads,
// answer interrupts, browse the store. Everything goes through the public
// HTTP API (api.js).

import * as api from './api.js';
import { render as renderGraph, INTERRUPT_TYPES } from './graph.js';
import { h, clear, pre, json, fmtTime, short, diff, equal, messageText, roleOf } from './dom.js';
import { stateForm, interruptForm, isMessages } from './forms.js';

const STREAM_MODES = ['values', 'updates', 'messages-tuple', 'debug', 'custom'];

const S = {
  view: 'graph',
  assistants: [],
  graphId: '',
  diagram: null,
  schema: null, // input_schema of the current graph
  graphHash: '',
  view2: null, // the rendered graph handle
  breakpoints: new Set(),
  thread: '',
  state: null, // the thread's current ThreadState
  threadStatus: '', // the thread's status when its state was read
  values: {}, // values shown in the chat (live during a run)
  streaming: new Map(), // message id -> {node, text}
  running: null, // {abort, runId}
  tab: 'chat',
  history: [],
  selected: '', // selected checkpoint id
  problems: [],
  loaded: [],
};

const $ = (sel) => document.querySelector(sel);

// ---------- routing ----------

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { view: p.get('view') || 'graph', graph: p.get('graph') || '', thread: p.get('thread') || '' };
}

function go(params) {
  const cur = readHash();
  const next = { ...cur, ...params };
  const p = new URLSearchParams();
  if (next.view && next.view !== 'graph') p.set('view', next.view);
  if (next.graph) p.set('graph', next.graph);
  if (next.thread) p.set('thread', next.thread);
  const h2 = '#' + p.toString();
  if (location.hash === h2) route();
  else location.hash = h2;
}

window.addEventListener('hashchange', () => route());

async function route() {
  const r = readHash();
  S.view = r.view;
  for (const b of document.querySelectorAll('nav.tabs button')) b.classList.toggle('active', b.dataset.view === S.view);
  if (r.graph && r.graph !== S.graphId) await selectGraph(r.graph);
  else if (!S.graphId && S.assistants.length) await selectGraph(S.assistants[0].graph_id);
  if (S.view === 'threads') return showThreads();
  if (S.view === 'store') return showStore();
  showGraphView();
  if (r.thread !== S.thread) await openThread(r.thread);
}

// ---------- boot ----------

api.auth.onMissing(() => {
  S.needKey = true;
  askKey(api.auth.key() ? 'The server did not accept this key.' : 'This server needs an API key.');
});

function askKey(reason) {
  const dlg = $('#key-dialog');
  $('#key-reason').textContent = reason || '';
  $('#key-input').value = api.auth.key();
  if (!dlg.open) dlg.showModal();
}

function setupChrome() {
  for (const b of document.querySelectorAll('nav.tabs button')) b.addEventListener('click', () => go({ view: b.dataset.view }));
  $('#graph-select').addEventListener('change', (e) => go({ view: S.view === 'store' ? 'graph' : S.view, graph: e.target.value, thread: '' }));
  $('#key-button').addEventListener('click', () => askKey(api.auth.key() ? 'The key is kept in this tab only.' : 'Set the API key for this tab.'));
  $('#key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    api.auth.set($('#key-input').value.trim());
    $('#key-dialog').close();
    boot();
  });
  $('#key-clear').addEventListener('click', () => { api.auth.set(''); $('#key-input').value = ''; });
}

async function boot() {
  S.needKey = false;
  S.booting = true;
  const problems = checkProblems();
  try {
    S.assistants = await api.assistants.search();
  } catch (e) {
    S.booting = false;
    setStatus(e.status === 401 ? 'An API key is needed.' : 'Cannot list assistants: ' + e.message, true);
    return;
  }
  S.booting = false;
  setStatus('');
  const sel = $('#graph-select');
  clear(sel, S.assistants.map((a) => h('option', { value: a.graph_id, text: a.name || a.graph_id })));
  await problems;
  if (!S.assistants.length) {
    clear($('#main'), h('div.empty', 'No graph is loaded. Fix the files listed above; they load as soon as they are valid.'));
    return;
  }
  await route();
}

function setStatus(text, bad) {
  const e = $('#status');
  e.textContent = text;
  e.classList.toggle('bad', !!bad);
}

// ---------- diagnostics (hot reload) ----------

async function checkProblems() {
  if (S.needKey) return;
  let info;
  try { info = await api.graphs(); } catch { return; }
  S.loaded = info.graphs || [];
  const diags = info.diagnostics || [];
  if (!equal(diags, S.problems)) {
    S.problems = diags;
    renderProblems();
  }
  const cur = S.loaded.find((g) => g.graph_id === S.graphId);
  if (cur && S.graphHash && cur.hash !== S.graphHash && !S.running) {
    S.graphHash = '';
    await selectGraph(S.graphId, true);
    if (S.view === 'graph') showGraphView();
  }
  const names = new Set(S.assistants.map((a) => a.graph_id));
  // A graph file that became valid: list the assistants again.
  if (!S.booting && S.loaded.some((g) => !names.has(g.graph_id))) boot();
}

function renderProblems() {
  const box = $('#problems');
  if (!S.problems.length) { box.hidden = true; clear(box); return; }
  box.hidden = false;
  const files = [...new Set(S.problems.map((d) => d.file))];
  const kept = files.filter((f) => S.loaded.some((g) => g.file === f));
  clear(box,
    h('div.problems-title', `${files.length} graph file${files.length > 1 ? 's' : ''} failed to load` +
      (kept.length ? ' — the last good version stays in service until the file is fixed' : '')),
    S.problems.map((d) => h('div.diag.' + (d.severity || 'error'),
      h('div.diag-head', h('code.pos', `${d.file}:${d.line}:${d.col}`), ' ', h('span.code', d.code ? `[${d.code}]` : ''), ' ', h('span.diag-msg', d.message)),
      d.source ? h('pre.source', { text: sourceWithCaret(d) }) : null)));
}

// sourceWithCaret shows a diagnostic's source line with a caret under its
// column (columns count bytes; tabs are shown as four spaces).
function sourceWithCaret(d) {
  const bytes = new TextEncoder().encode(d.source);
  const before = new TextDecoder().decode(bytes.slice(0, Math.max(0, d.col - 1)));
  const tabs = (s) => s.replace(/\t/g, '    ');
  const gutter = String(d.line).padStart(4);
  return `${gutter} | ${tabs(d.source)}\n${' '.repeat(gutter.length)} | ${' '.repeat([...tabs(before)].length)}^`;
}

// ---------- graph view ----------

async function selectGraph(id, force) {
  if (id === S.graphId && !force) return;
  const a = S.assistants.find((x) => x.graph_id === id);
  if (!a) return;
  if (id !== S.graphId) { S.thread = ''; S.state = null; S.values = {}; S.breakpoints.clear(); S.history = []; S.selected = ''; }
  S.graphId = id;
  $('#graph-select').value = id;
  const [diagram, schemas] = await Promise.all([api.assistants.graph(id), api.assistants.schemas(id)]);
  S.diagram = diagram;
  S.schema = schemas.input_schema || schemas.state_schema || {};
  const loaded = S.loaded.find((g) => g.graph_id === id);
  S.graphHash = loaded ? loaded.hash : '';
}

function messagesField() {
  const props = (S.schema && S.schema.properties) || {};
  return Object.keys(props).find((k) => isMessages(props[k])) || '';
}

function showGraphView() {
  const a = S.assistants.find((x) => x.graph_id === S.graphId) || {};
  const left = h('section.graph-pane',
    h('div.pane-head', h('h2', a.name || S.graphId), h('span.muted', a.metadata && a.metadata.version ? 'v' + a.metadata.version : ''),
      h('span.legend', h('span.sw.running'), 'running', h('span.sw.done'), 'done', h('span.sw.interrupted'), 'waiting', h('span.sw.bp'), 'pause before (click a node)')),
    a.description ? h('p.desc', a.description) : null,
    h('div#graph-canvas'));
  const right = h('section.thread-pane#thread-pane');
  clear($('#main'), h('div.split', left, right));
  if (S.diagram) {
    S.view2 = renderGraph($('#graph-canvas'), S.diagram, { name: S.graphId, onClick: toggleBreakpoint });
    for (const b of S.breakpoints) S.view2.breakpoint(b, true);
    if (!performance.getEntriesByName('studio:graph').length) performance.mark('studio:graph');
  }
  renderThreadPane();
  markGraphFromState();
}

function toggleBreakpoint(node) {
  if (S.breakpoints.has(node)) S.breakpoints.delete(node);
  else S.breakpoints.add(node);
  S.view2.breakpoint(node, S.breakpoints.has(node));
  renderBreakpoints();
}

function renderBreakpoints() {
  const e = $('#breakpoints');
  if (!e) return;
  clear(e, S.breakpoints.size ? ['Pause before: ', [...S.breakpoints].map((b) => h('code', b + ' ')),
    h('button.link', { on: { click: () => { for (const b of S.breakpoints) S.view2.breakpoint(b, false); S.breakpoints.clear(); renderBreakpoints(); } } }, 'clear')] : '');
}

// markGraphFromState shows, when no run streams, which nodes the thread
// waits on.
function markGraphFromState() {
  if (!S.view2 || S.running) return;
  const st = S.state;
  if (!st) return;
  for (const n of st.next || []) S.view2.set(n, (st.interrupts || []).length ? 'interrupted' : '', (st.interrupts || []).length ? 'waiting' : 'next');
}

// ---------- thread pane ----------

function statusOf(st) {
  if (S.running) return 'busy';
  if (!st || !st.checkpoint_id) return 'new';
  if ((st.interrupts || []).length) return 'interrupted';
  if ((st.next || []).length) return 'paused';
  return 'idle';
}

function renderThreadPane() {
  const pane = $('#thread-pane');
  if (!pane) return;
  const tabs = ['chat', 'state', 'timeline'].map((t) => h('button', { class: S.tab === t ? 'active' : '', 'data-tab': t, on: { click: () => { S.tab = t; renderThreadPane(); } } },
    { chat: 'Chat', state: 'State', timeline: 'Timeline' }[t]));
  clear(pane,
    h('div.thread-bar',
      h('span.label', 'Thread'), h('code#thread-id', { title: S.thread }, S.thread ? short(S.thread) : '(new)'),
      h('span.pill#thread-status', { class: 'pill ' + statusOf(S.state) }, statusOf(S.state)),
      h('span.spacer'),
      h('button', { on: { click: () => go({ thread: '' }) }, title: 'start a new thread' }, 'New thread'),
      h('button', { on: { click: () => go({ view: 'threads' }) } }, 'Threads…')),
    h('nav.subtabs', tabs),
    h('div#tab-body'));
  renderTab();
}

function renderTab() {
  const body = $('#tab-body');
  if (!body) return;
  if (S.tab === 'chat') renderChat(body);
  else if (S.tab === 'state') renderState(body);
  else renderTimeline(body);
}

async function openThread(id) {
  S.thread = id || '';
  S.state = null; S.values = {}; S.history = []; S.selected = ''; S.streaming.clear();
  if (S.view2) S.view2.clear();
  if (id) {
    try {
      const t = await api.threads.get(id);
      const gid = t.metadata && t.metadata.graph_id;
      if (gid && gid !== S.graphId && S.assistants.some((a) => a.graph_id === gid)) {
        await selectGraph(gid);
        S.thread = id;
        showGraphView();
      }
    } catch (e) {
      setStatus(`Thread ${id}: ${e.message}`, true);
    }
    await refreshThread();
  }
  renderThreadPane();
  markGraphFromState();
}

async function refreshThread() {
  if (!S.thread) return;
  try {
    const [state, thread] = await Promise.all([api.threads.getState(S.thread), api.threads.get(S.thread)]);
    S.state = state;
    S.threadStatus = thread.status;
    S.values = S.state.values || {};
  } catch (e) {
    setStatus('State: ' + e.message, true);
  }
  if (S.tab === 'timeline') await loadHistory();
}

// ---------- chat ----------

function renderChat(body) {
  const mf = messagesField();
  const chat = h('div.chat#chat');
  const log = h('div.runlog#runlog');
  const intr = h('div#interrupts');
  const text = h('textarea#message', { rows: 2, placeholder: mf ? 'Message (Enter to send, Shift+Enter for a new line)' : 'This graph has no messages field: fill the fields below' });
  if (!mf) text.disabled = true;
  const form = stateForm(S.schema);
  const fields = h('details.fields', { open: !mf }, h('summary', 'State fields'), form.el);
  const send = h('button.primary#send', { type: 'submit' }, 'Send');
  const stop = h('button#stop', { type: 'button', hidden: !S.running, on: { click: stopRun } }, 'Stop');
  const err = h('div.error-text#composer-error');
  const composer = h('form.composer', {
    on: {
      submit: (ev) => {
        ev.preventDefault();
        let input;
        try { input = form.collect(); } catch (e) { err.textContent = e.message; return; }
        const msg = text.value.trim();
        if (msg && mf) input[mf] = [{ type: 'human', content: msg }];
        if (!Object.keys(input).length) { err.textContent = 'Write a message or fill a field.'; return; }
        err.textContent = '';
        text.value = '';
        startRun({ input });
      },
    },
  }, text, fields, h('div.composer-bar', h('div#breakpoints.muted'), h('span.spacer'), err, stop, send));
  text.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); composer.requestSubmit(); }
  });
  const logBox = h('details.runlog-box', { open: S.logOpen }, h('summary#runlog-summary', runlogSummary()), log);
  logBox.addEventListener('toggle', () => { S.logOpen = logBox.open; scrollChat(); });
  clear(body, h('div.chat-wrap', chat, intr, logBox), composer);
  renderMessages();
  renderInterrupts();
  renderBreakpoints();
  if (S.runlog) for (const e of S.runlog) log.appendChild(e);
  scrollChat();
}

function scrollChat() {
  const w = document.querySelector('.chat-wrap');
  if (w) w.scrollTop = w.scrollHeight;
}

function renderMessages() {
  const chat = $('#chat');
  if (!chat) return;
  const mf = messagesField();
  const msgs = (mf && Array.isArray(S.values[mf]) && S.values[mf]) || [];
  const items = msgs.map((m) => bubble(roleOf(m), messageText(m), m));
  const known = new Set(msgs.map((m) => m.id).filter(Boolean));
  for (const [id, s] of S.streaming) if (!known.has(id)) items.push(bubble('assistant streaming', s.text, { id, name: s.node }));
  if (!items.length) items.push(h('div.empty', S.thread ? 'No messages yet.' : 'Send a message to start a new thread.'));
  clear(chat, items);
  scrollChat();
}

function bubble(role, text, m) {
  const calls = m && Array.isArray(m.tool_calls) && m.tool_calls.length ? h('pre.json.calls', { text: json(m.tool_calls) }) : null;
  return h('div.msg.' + role.split(' ').join('.'), { 'data-id': (m && m.id) || '' },
    h('div.who', role === 'assistant streaming' ? 'assistant…' : role + (m && m.name ? ' · ' + m.name : '')),
    h('div.text', text), calls);
}

function pendingInterrupts() {
  if (S.running) return S.liveInterrupts || [];
  const st = S.state;
  if (!st) return [];
  if ((st.interrupts || []).length) return st.interrupts;
  // Stopped at a breakpoint: the thread interrupted with tasks left, none
  // waiting for an answer and none failed (a breakpoint records no
  // interrupt, as in LangGraph; a thread busy with a run has tasks left too).
  if (S.threadStatus === 'interrupted' && (st.next || []).length && !(st.tasks || []).some((t) => t.error)) {
    return [{ id: '', value: { when: 'before', node: st.next.join(', ') } }];
  }
  return [];
}

function renderInterrupts() {
  const box = $('#interrupts');
  if (!box) return;
  const list = pendingInterrupts();
  clear(box, list.map((i) => interruptForm(i, (S.schema && S.schema.properties) || {}, (value, cont) => answer(i, value, cont, list.length))));
}

function answer(intr, value, cont, count) {
  if (cont) return startRun({ input: null });
  // One pending interrupt: resume with the value; several: LangGraph's map
  // of interrupt id to value.
  const resume = count > 1 ? { [intr.id]: value } : value;
  return startRun({ command: { resume } });
}

function runlogSummary() {
  const n = (S.runlog || []).length;
  return `Run log: node updates as they land (${n} event${n === 1 ? '' : 's'})`;
}

function logEntry(kind, title, detail) {
  const e = h('div.log.' + kind, h('span.t', new Date().toLocaleTimeString([], { hour12: false })), h('span.k', kind), h('span.title', title),
    detail !== undefined ? h('details', h('summary', 'data'), pre(detail)) : null);
  (S.runlog ||= []).push(e);
  const log = $('#runlog');
  if (log) { log.appendChild(e); scrollChat(); }
  const sum = $('#runlog-summary');
  if (sum) sum.textContent = runlogSummary();
}

// ---------- runs ----------

async function startRun(body) {
  if (S.running) return;
  const err = $('#composer-error');
  try {
    if (!S.thread) {
      const t = await api.threads.create({ graph_id: S.graphId });
      S.thread = t.thread_id;
      history.replaceState(null, '', '#' + new URLSearchParams({ ...(S.view !== 'graph' ? { view: S.view } : {}), graph: S.graphId, thread: S.thread }));
    }
  } catch (e) {
    if (err) err.textContent = 'Cannot create a thread: ' + e.message;
    return;
  }
  body = { assistant_id: S.graphId, stream_mode: STREAM_MODES, ...body };
  if (S.breakpoints.size) body.interrupt_before = [...S.breakpoints];
  const abort = new AbortController();
  S.running = { abort, runId: '' };
  S.liveInterrupts = [];
  S.streaming.clear();
  S.runlog = [];
  const started = new Map();
  let prevStep = new Set(['__start__']), curStep = new Set(), lastStep = -1;
  if (S.view2) S.view2.clear();
  renderThreadPane();
  const markStart = (name, step) => {
    if (step !== lastStep) { if (curStep.size) prevStep = curStep; curStep = new Set(); lastStep = step; }
    curStep.add(name);
    if (S.view2) {
      for (const p of prevStep) S.view2.taken(p, name);
      S.view2.set(name, 'running', '…');
    }
    started.set(name, performance.now());
    logEntry('task', `${name} started`);
  };
  const markEnd = (name, ms, error, result) => {
    const t = ms ?? (started.has(name) ? performance.now() - started.get(name) : undefined);
    if (S.view2) S.view2.set(name, error ? 'error' : 'done', t === undefined ? '' : fmtMs(t));
    if (error) logEntry('error', `${name} failed`, error);
    else logEntry('done', `${name} finished${t === undefined ? '' : ' in ' + fmtMs(t)}`, result);
  };
  let failed = null;
  try {
    for await (const ev of api.runs.stream(S.thread, body, abort.signal)) {
      const d = ev.data;
      switch (ev.event) {
        case 'metadata':
          S.running.runId = d && d.run_id;
          logEntry('run', `run ${short(S.running.runId)} started`);
          break;
        case 'values': {
          const v = { ...d };
          if (v.__interrupt__) { S.liveInterrupts = v.__interrupt__; delete v.__interrupt__; renderInterrupts(); }
          S.values = v;
          S.streaming.clear();
          renderMessages();
          break;
        }
        case 'updates':
          for (const [node, upd] of Object.entries(d || {})) {
            if (node === '__interrupt__' && !(upd || []).length) {
              logEntry('interrupt', 'stopped at a breakpoint', upd);
            } else if (node === '__interrupt__') {
              S.liveInterrupts = upd;
              renderInterrupts();
              for (const i of upd) if (S.view2 && i.ns && i.ns[0]) S.view2.set(i.ns[0], 'interrupted', 'waiting');
              logEntry('interrupt', 'interrupt: ' + (upd.map((i) => (i.value && i.value.message) || (i.ns && i.ns[0]) || i.id).join('; ')), upd);
            } else {
              logEntry('update', `${node} → ${Object.keys(upd || {}).join(', ') || '(no change)'}`, upd);
            }
          }
          break;
        case 'messages': {
          const [chunk, meta] = Array.isArray(d) ? d : [d, {}];
          if (!chunk) break;
          const id = chunk.id || 'stream';
          const s = S.streaming.get(id) || { node: (meta && meta.langgraph_node) || '', text: '' };
          s.text += messageText(chunk);
          S.streaming.set(id, s);
          renderMessages();
          break;
        }
        case 'debug':
          if (d && d.type === 'task') markStart(d.payload.name, d.step);
          else if (d && d.type === 'task_result') markEnd(d.payload.name, d.payload.duration_ms, d.payload.error, d.payload.result);
          break;
        case 'tasks':
          if (d && 'result' in d || d && 'error' in d) markEnd(d.name, undefined, d.error, d.result);
          else if (d && d.name) markStart(d.name, -2);
          break;
        case 'custom':
          logEntry('custom', (d && d.type) || 'event', d && d.payload !== undefined ? d.payload : d);
          break;
        case 'error':
          failed = (d && (d.message || d.error)) || 'the run failed';
          logEntry('error', failed, d);
          break;
        case 'end':
          break;
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') failed = e.message;
  }
  if (S.running && !failed && S.view2 && !S.liveInterrupts.length && !abort.signal.aborted) {
    for (const n of curStep) S.view2.taken(n, '__end__');
  }
  const runId = S.running && S.running.runId;
  S.running = null;
  S.liveInterrupts = [];
  if (failed) { logEntry('error', failed); setStatus('Run failed: ' + failed, true); } else setStatus('');
  // The run added checkpoints: the timeline is loaded afresh, showing the
  // newest one.
  S.history = [];
  S.selected = '';
  await refreshThread();
  renderThreadPane();
  markGraphFromState();
  const st = S.state;
  if (st && (st.interrupts || []).length && S.view2) for (const i of st.interrupts) if (i.ns && i.ns[0]) S.view2.set(i.ns[0], 'interrupted', 'waiting');
  if (failed) { const e = $('#composer-error'); if (e) e.textContent = failed; }
  if (runId) await engineTimings(runId);
}

// engineTimings replaces the durations seen by the browser with the ones the
// engine measured, from the thread's audit log (when the server keeps one).
async function engineTimings(runId) {
  let log;
  try { log = await api.threads.log(S.thread); } catch { return; }
  const run = ((log && log.runs) || []).find((r) => r.run_id === runId);
  if (!run || !S.view2) return;
  for (const n of run.nodes || []) {
    if (n.status === 'ok' || n.status === 'caught') S.view2.set(n.node, 'done', fmtMs(n.duration_ms));
    else if (n.status === 'error') S.view2.set(n.node, 'error', fmtMs(n.duration_ms));
  }
  const st = S.state;
  if (st) for (const i of st.interrupts || []) if (i.ns && i.ns[0]) S.view2.set(i.ns[0], 'interrupted', 'waiting');
  logEntry('run', `run ${short(runId)} ${run.status} in ${fmtMs(run.duration_ms)} (engine time; nodes: ` +
    (run.nodes || []).map((n) => `${n.node} ${fmtMs(n.duration_ms)}`).join(', ') + ')');
}

async function stopRun() {
  const r = S.running;
  if (!r) return;
  if (r.runId) { try { await api.runs.cancel(S.thread, r.runId); } catch { /* the stream ends anyway */ } }
  r.abort.abort();
}

function fmtMs(ms) {
  if (ms < 1) return Math.round(ms * 1000) + ' µs';
  if (ms < 1000) return Math.round(ms) + ' ms';
  return (ms / 1000).toFixed(2) + ' s';
}

// ---------- state ----------

async function renderState(body) {
  if (!S.thread) { clear(body, h('div.empty', 'No thread yet: send a message in Chat.')); return; }
  const st = S.state || {};
  const runsBox = h('div', h('p.muted', 'loading runs…'));
  clear(body,
    h('div.kv', h('span', 'checkpoint'), h('code', st.checkpoint_id || '—'), h('span', 'next'), h('code', (st.next || []).join(', ') || '— (at END)'),
      h('span', 'updated'), h('span', fmtTime(st.created_at))),
    h('h3', 'Pending interrupts'), h('div#interrupts'),
    h('h3', 'State now'), pre(st.values || {}, 'state-now'),
    h('h3', 'Runs'), runsBox);
  renderInterrupts();
  if (!pendingInterrupts().length) $('#interrupts').appendChild(h('p.muted', 'None.'));
  try {
    const list = await api.runs.list(S.thread, 50);
    clear(runsBox, list.length ? h('table.runs', h('tr', h('th', 'run'), h('th', 'status'), h('th', 'created'), h('th', 'input')),
      list.map((r) => h('tr', h('td', h('code', { title: r.run_id }, short(r.run_id))), h('td', h('span', { class: 'pill ' + r.status }, r.status)),
        h('td', fmtTime(r.created_at)), h('td', h('code.small', runSummary(r)))))) : h('p.muted', 'No runs.'));
  } catch (e) {
    clear(runsBox, h('p.error-text', e.message));
  }
}

function runSummary(r) {
  const k = r.kwargs || {};
  if (k.command) return 'resume ' + JSON.stringify(k.command.resume ?? k.command).slice(0, 60);
  if (k.input === undefined || k.input === null) return (k.checkpoint_id ? 'from checkpoint ' + short(k.checkpoint_id) : 'continue');
  return JSON.stringify(k.input).slice(0, 80);
}

// ---------- time travel ----------

async function loadHistory() {
  try {
    S.history = await api.threads.history(S.thread, 200);
  } catch (e) {
    setStatus('History: ' + e.message, true);
    S.history = [];
  }
}

// Pseudo-writers of a step's checkpoint beside its nodes: a turn's input and
// a command's update, applied with the first step.
const CARRIED = new Set(['input', 'command']);

// writerOf names what wrote a checkpoint, from its own metadata: the nodes
// in writes (LangGraph's servers before 0.5) or writers (graphctl's); a
// step names its nodes, an input checkpoint "input", an update its as_node.
function writerOf(item) {
  const meta = item.metadata || {};
  if (meta.writes && typeof meta.writes === 'object') return Object.keys(meta.writes).join(', ');
  if (meta.source === 'input') return 'input';
  const writers = Array.isArray(meta.writers) ? meta.writers : [];
  const nodes = writers.filter((w) => !CARRIED.has(w));
  return (nodes.length ? nodes : writers).join(', ');
}

async function renderTimeline(body) {
  if (!S.thread) { clear(body, h('div.empty', 'No thread yet: send a message in Chat.')); return; }
  if (!S.history.length) { clear(body, h('p.muted', 'loading history…')); await loadHistory(); }
  const list = S.history;
  if (!S.selected && list.length) S.selected = list[0].checkpoint_id;
  const latest = list[0];
  const items = list.map((it, i) => {
    const older = list[i + 1];
    const forked = it.parent_checkpoint_id && older && older.checkpoint_id !== it.parent_checkpoint_id;
    return h('li', { class: (it.checkpoint_id === S.selected ? 'selected' : '') + (forked ? ' forked' : ''), 'data-checkpoint': it.checkpoint_id,
      on: { click: () => { S.selected = it.checkpoint_id; renderTimeline(body); } } },
    h('span.step', 'step ' + ((it.metadata && it.metadata.step) ?? '?')),
    h('span.src', (it.metadata && it.metadata.source) || ''),
    h('span.writer', writerOf(it)),
    (it.next || []).length ? h('span.next', '→ ' + it.next.join(', ')) : h('span.next', 'END'),
    forked ? h('span.fork', 'branches off ' + short(it.parent_checkpoint_id)) : null,
    h('span.time', fmtTime(it.created_at)));
  });
  const regen = latest && latest.parent_checkpoint_id
    ? h('button#regenerate', { disabled: !!S.running, title: 'run the last step again from the checkpoint before it (a fork)', on: { click: () => runFrom(latest.parent_checkpoint_id) } }, '↻ Regenerate last step')
    : null;
  const detail = h('div.cp-detail#cp-detail');
  clear(body, h('div.timeline-bar', h('span.muted', `${list.length} checkpoints, newest first`), h('span.spacer'), regen,
    h('button', { on: { click: async () => { await loadHistory(); renderTimeline(body); } } }, 'Reload')),
  h('div.timeline', h('ol.cps', items), detail));
  if (S.selected) renderCheckpoint(detail, list.find((x) => x.checkpoint_id === S.selected));
}

async function renderCheckpoint(box, it) {
  if (!it) { clear(box); return; }
  let parent = S.history.find((x) => x.checkpoint_id === it.parent_checkpoint_id);
  if (!parent && it.parent_checkpoint_id) {
    try { parent = await api.threads.getState(S.thread, it.parent_checkpoint_id); } catch { parent = null; }
  }
  const changes = diff(parent && parent.values, it.values);
  const diffEl = changes.length ? h('table.diff', h('tr', h('th', 'field'), h('th', 'before'), h('th', 'after')),
    changes.map((c) => h('tr.' + c.kind, h('td', h('code', c.field), h('span.kind', c.kind)),
      h('td', c.added ? h('span.muted', `${c.before.length} items`) : pre(c.before)),
      h('td', c.added ? [h('span.muted', `+${c.added.length}:`), pre(c.added)] : pre(c.after)))))
    : h('p.muted', parent ? 'No field changed.' : 'The first checkpoint of the thread.');
  const nodes = (S.diagram && S.diagram.nodes || []).map((n) => n.id).filter((n) => !n.startsWith('__'));
  const editor = h('textarea.edit-values', { rows: 10, value: json(it.values || {}), spellcheck: 'false' });
  const asNode = h('select#as-node', h('option', { value: '', text: '(none: keep the next nodes)' }),
    nodes.map((n) => h('option', { value: n, text: n, selected: n === writerOf(it) })));
  const err = h('div.error-text');
  const fork = async () => {
    let edited;
    try { edited = JSON.parse(editor.value); } catch (e) { err.textContent = 'Not valid JSON: ' + e.message; return; }
    const changed = {};
    for (const [k, v] of Object.entries(edited)) if (!equal(v, (it.values || {})[k])) changed[k] = v;
    if (!Object.keys(changed).length) { err.textContent = 'Change a value first.'; return; }
    err.textContent = '';
    try {
      const res = await api.threads.updateState(S.thread, changed, asNode.value, it.checkpoint_id);
      const id = (res && (res.checkpoint_id || (res.checkpoint && res.checkpoint.checkpoint_id) || (res.configurable && res.configurable.checkpoint_id))) || '';
      logEntry('fork', `state edited at ${short(it.checkpoint_id)} → checkpoint ${short(id)}`, changed);
      // The re-run shows in Chat, where it stays once it ends: its answer
      // is what the edit was for; the timeline reloads when opened.
      await runFrom(id);
    } catch (e) {
      err.textContent = 'Fork failed: ' + e.message;
    }
  };
  clear(box,
    h('div.kv', h('span', 'checkpoint'), h('code', it.checkpoint_id), h('span', 'parent'), h('code', it.parent_checkpoint_id || '—'),
      h('span', 'next'), h('code', (it.next || []).join(', ') || 'END'), h('span', 'created'), h('span', fmtTime(it.created_at))),
    h('div.buttons', h('button', { title: 'run again from this checkpoint (a fork: later checkpoints stay in history)', on: { click: () => runFrom(it.checkpoint_id) } }, '▶ Re-run from here')),
    h('h3', 'Changes from the previous checkpoint'), diffEl,
    h('details.full-state', h('summary', 'Full state'), pre(it.values || {})),
    h('details.edit#edit-state', h('summary', 'Edit state here and fork'),
      h('p.muted', 'The changed fields are written on top of this checkpoint as if the chosen node had written them (updateState with as_node), then the thread runs on from there. Earlier checkpoints stay as they were.'),
      editor, h('label.field', h('span.name', 'as node'), asNode), err,
      h('div.buttons', h('button.primary#fork', { on: { click: fork } }, 'Fork from here'))));
}

// runFrom continues the thread from a checkpoint (its newest when none is
// named) in the Chat tab.
async function runFrom(checkpointId) {
  S.tab = 'chat';
  await startRun({ input: null, ...(checkpointId ? { checkpoint_id: checkpointId, checkpoint: { checkpoint_id: checkpointId, checkpoint_ns: '' } } : {}) });
}

// ---------- threads ----------

async function showThreads() {
  const q = h('input#thread-query', { type: 'search', placeholder: 'thread id, text, or key=value for metadata' });
  const status = h('select#thread-status-filter', ['', 'idle', 'busy', 'interrupted', 'error'].map((s) => h('option', { value: s, text: s || 'any status' })));
  const only = h('input#only-graph', { type: 'checkbox', checked: true });
  const table = h('div#thread-list');
  const run = async () => {
    const body = { limit: 100, sort_by: 'updated_at', sort_order: 'desc' };
    const text = q.value.trim();
    const meta = {};
    if (only.checked) meta.graph_id = S.graphId;
    const m = /^([\w.-]+)=(.*)$/.exec(text);
    if (m) meta[m[1]] = m[2];
    if (Object.keys(meta).length) body.metadata = meta;
    if (status.value) body.status = status.value;
    let list;
    try { list = await api.threads.search(body); } catch (e) { clear(table, h('p.error-text', e.message)); return; }
    if (text && !m) {
      const t = text.toLowerCase();
      list = list.filter((x) => x.thread_id.toLowerCase().includes(t) || JSON.stringify(x.values || {}).toLowerCase().includes(t));
    }
    clear(table, list.length ? h('table.threads', h('tr', h('th', 'thread'), h('th', 'graph'), h('th', 'status'), h('th', 'updated'), h('th', 'last message')),
      list.map((t) => h('tr', { 'data-thread': t.thread_id, on: { click: () => go({ view: 'graph', graph: (t.metadata && t.metadata.graph_id) || S.graphId, thread: t.thread_id }) } },
        h('td', h('code', { title: t.thread_id }, short(t.thread_id))), h('td', (t.metadata && t.metadata.graph_id) || ''),
        h('td', h('span', { class: 'pill ' + t.status }, t.status)), h('td', fmtTime(t.updated_at)), h('td.preview', preview(t)))))
      : h('p.muted', 'No thread matches.'));
  };
  q.addEventListener('input', debounce(run, 250));
  status.addEventListener('change', run);
  only.addEventListener('change', run);
  clear($('#main'), h('section.page',
    h('div.page-head', h('h2', 'Threads'), q, status, h('label.inline', only, ` only ${S.graphId}`)),
    table));
  await run();
}

function preview(t) {
  for (const v of Object.values(t.values || {})) {
    if (Array.isArray(v) && v.length && v[v.length - 1] && v[v.length - 1].content !== undefined) {
      const s = messageText(v[v.length - 1]);
      return s.length > 90 ? s.slice(0, 89) + '…' : s;
    }
  }
  return '';
}

function debounce(fn, ms) {
  let t;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}

// ---------- store ----------

async function showStore() {
  const nsList = h('ul.namespaces#namespaces');
  const items = h('div#store-items');
  const q = h('input#store-query', { type: 'search', placeholder: 'search text (semantic or keyword, as the store is configured)' });
  let current = [];
  const search = async () => {
    try {
      const res = await api.store.search(current, q.value.trim(), 100);
      const list = (res && res.items) || [];
      clear(items, list.length ? list.map((it) => h('div.item', h('div.item-head', h('code', it.namespace.join(' / ')), ' ', h('b', it.key),
        it.score !== undefined && it.score !== null ? h('span.muted', ` score ${Number(it.score).toFixed(3)}`) : null,
        h('span.muted', ' ' + fmtTime(it.updated_at))), pre(it.value))) : h('p.muted', 'No items.'));
    } catch (e) { clear(items, h('p.error-text', e.message)); }
  };
  q.addEventListener('input', debounce(search, 250));
  clear($('#main'), h('section.page.store', h('div.page-head', h('h2', 'Store'), q),
    h('div.store-split', h('div', h('h3', 'Namespaces'), nsList), h('div', items))));
  try {
    const res = await api.store.namespaces();
    const list = Array.isArray(res) ? res : (res && res.namespaces) || [];
    const pick = (ns, li) => { current = ns; for (const x of nsList.children) x.classList.remove('selected'); if (li) li.classList.add('selected'); search(); };
    clear(nsList, h('li', { on: { click: (e) => pick([], e.currentTarget) }, class: 'selected' }, '(all)'),
      list.map((ns) => h('li', { 'data-ns': ns.join('/'), on: { click: (e) => pick(ns, e.currentTarget) } }, ns.join(' / '))));
  } catch (e) { clear(nsList, h('li.error-text', e.message)); }
  await search();
}

// ---------- start ----------

setupChrome();
boot();
setInterval(checkProblems, 2000);
// Exposed for debugging from the console.
window.studio = { state: S, INTERRUPT_TYPES };
