// The Studio's only way to the server: the public HTTP API, as the LangGraph
// SDKs use it. The API key (when the server has keys) lives in this tab's
// sessionStorage and nowhere else.

const KEY = 'graphctl.apiKey';

// base is the server's root: the page is served at BASE/studio/.
export const base = location.pathname.replace(/\/studio(\/.*)?$/, '');

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

let onUnauthorized = () => {};

export const auth = {
  key: () => sessionStorage.getItem(KEY) || '',
  set(k) {
    if (k) sessionStorage.setItem(KEY, k);
    else sessionStorage.removeItem(KEY);
  },
  // onMissing is called when the server answers 401.
  onMissing(fn) { onUnauthorized = fn; },
};

function headers(json) {
  const h = { Accept: json ? 'application/json' : 'text/event-stream' };
  const k = auth.key();
  if (k) h.Authorization = 'Bearer ' + k;
  return h;
}

async function errorOf(r) {
  let body = null;
  let msg = r.status + ' ' + r.statusText;
  try {
    body = await r.json();
    const e = body && (body.error || body);
    msg = (e && (e.message || e.detail)) || body.detail || msg;
    if (typeof msg !== 'string') msg = JSON.stringify(msg);
  } catch { /* not JSON */ }
  if (r.status === 401) onUnauthorized();
  return new ApiError(r.status, msg, body);
}

// call sends one JSON request and returns the decoded answer (null for an
// empty body).
export async function call(method, path, body) {
  const h = headers(true);
  const init = { method, headers: h };
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(base + path, init);
  if (!r.ok) throw await errorOf(r);
  const text = await r.text();
  return text ? JSON.parse(text) : null;
}

// stream POSTs a run request and yields its server-sent events as
// {event, data, id}, data decoded from JSON.
export async function* stream(path, body, signal) {
  const h = headers(false);
  h['Content-Type'] = 'application/json';
  const r = await fetch(base + path, { method: 'POST', headers: h, body: JSON.stringify(body), signal });
  if (!r.ok) throw await errorOf(r);
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let ev = { event: 'message', data: '', id: '' };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (ev.data !== '') {
          let data = ev.data;
          try { data = JSON.parse(data); } catch { /* keep text */ }
          yield { event: ev.event, data, id: ev.id };
        }
        ev = { event: 'message', data: '', id: '' };
        continue;
      }
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let v = i < 0 ? '' : line.slice(i + 1);
      if (v.startsWith(' ')) v = v.slice(1);
      if (field === 'data') ev.data += (ev.data ? '\n' : '') + v;
      else if (field === 'event') ev.event = v;
      else if (field === 'id') ev.id = v;
    }
  }
}

// The endpoints the Studio uses, named after the SDK's methods.
export const assistants = {
  search: () => call('POST', '/assistants/search', { limit: 1000 }),
  graph: (id) => call('GET', `/assistants/${enc(id)}/graph`),
  schemas: (id) => call('GET', `/assistants/${enc(id)}/schemas`),
};

export const threads = {
  create: (metadata) => call('POST', '/threads', { metadata }),
  get: (id) => call('GET', `/threads/${enc(id)}`),
  search: (q) => call('POST', '/threads/search', q),
  getState: (id, checkpointId) =>
    call('GET', `/threads/${enc(id)}/state` + (checkpointId ? '/' + enc(checkpointId) : '')),
  // updateState writes values as if asNode had written them; with a
  // checkpoint id, on top of that (past) checkpoint: a fork.
  updateState: (id, values, asNode, checkpointId) => {
    const body = { values };
    if (asNode) body.as_node = asNode;
    if (checkpointId) {
      body.checkpoint_id = checkpointId;
      body.checkpoint = { checkpoint_id: checkpointId, checkpoint_ns: '' };
    }
    return call('POST', `/threads/${enc(id)}/state`, body);
  },
  // log is the thread's audit log (a graphctl endpoint): each run's nodes
  // with their engine-measured durations.
  log: (id) => call('GET', `/threads/${enc(id)}/log`),
  history: (id, limit = 100, before) =>
    call('POST', `/threads/${enc(id)}/history`, before ? { limit, before } : { limit }),
};

export const runs = {
  list: (thread, limit = 20) => call('GET', `/threads/${enc(thread)}/runs?limit=${limit}`),
  cancel: (thread, run) => call('POST', `/threads/${enc(thread)}/runs/${enc(run)}/cancel`),
  stream: (thread, body, signal) => stream(`/threads/${enc(thread)}/runs/stream`, body, signal),
};

export const store = {
  namespaces: (prefix) => call('POST', '/store/namespaces', { prefix: prefix || [], limit: 1000 }),
  search: (namespace, query, limit = 50) => {
    const body = { namespace_prefix: namespace, limit };
    if (query) body.query = query;
    return call('POST', '/store/items/search', body);
  },
};

// graphs reports the loaded graphs and the diagnostics of graph files that
// failed to load (a graphctl endpoint; the SDKs do not have it).
export const graphs = () => call('GET', '/graphs');

function enc(s) { return encodeURIComponent(s); }
