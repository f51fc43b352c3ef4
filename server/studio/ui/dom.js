// Small DOM and JSON helpers shared by the Studio's views.

// h builds an element: h('div.cls#id', {attr, on: {click}}, ...children).
export function h(spec, attrs, ...children) {
  const m = /^([a-z0-9]+)?((?:[.#][\w-]+)*)$/i.exec(spec);
  const e = document.createElement((m && m[1]) || 'div');
  if (m) for (const part of m[2].match(/[.#][\w-]+/g) || []) {
    if (part[0] === '.') e.classList.add(part.slice(1));
    else e.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === 'text') e.textContent = v;
    else if (k === 'value') e.value = v;
    else if (k === 'checked') e.checked = !!v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(e, ...children) {
  e.textContent = '';
  append(e, children);
  return e;
}

export function json(v) {
  return JSON.stringify(v, null, 2);
}

// pre shows a value as indented JSON.
export function pre(v, cls) {
  return h('pre.json' + (cls ? '.' + cls : ''), { text: v === undefined ? '—' : json(v) });
}

export function fmtTime(s) {
  if (!s) return '';
  const d = new Date(s);
  return isNaN(d) ? String(s) : d.toLocaleString();
}

// short shortens an id to its end: ids that sort by time (UUIDv7,
// checkpoint ids) share their beginning, not their end.
export function short(id) {
  return id ? '…' + String(id).slice(-8) : '';
}

// equal compares two JSON values.
export function equal(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// diff lists the fields that differ between two states' values:
// [{field, kind: added|removed|changed, before, after, added: [...]}];
// for lists that only grew, added holds the new items.
export function diff(before, after) {
  before = before || {};
  after = after || {};
  const out = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const k of keys) {
    const a = before[k], b = after[k];
    if (equal(a, b)) continue;
    const d = { field: k, before: a, after: b };
    if (a === undefined) d.kind = 'added';
    else if (b === undefined) d.kind = 'removed';
    else d.kind = 'changed';
    if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && a.every((x, i) => equal(x, b[i]))) {
      d.added = b.slice(a.length);
    }
    out.push(d);
  }
  return out;
}

// text of a message's content (a string or LangChain content blocks).
export function messageText(m) {
  const c = m && m.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p === 'string' ? p : p.text || '')).join('');
  return c === undefined ? '' : JSON.stringify(c);
}

export function roleOf(m) {
  const r = (m && (m.type || m.role)) || '';
  return { human: 'user', ai: 'assistant', AIMessageChunk: 'assistant' }[r] || r;
}
