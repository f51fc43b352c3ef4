// Forms built from data: run input from the state schema (enums become
// selects), and answers to interrupts from their payload.

import { h, json } from './dom.js';

// isMessages tells a messages field from its JSON Schema.
export function isMessages(s) {
  return !!(s && s.type === 'array' && s.items && s.items.properties && s.items.properties.role);
}

function inputFor(name, s, initial) {
  const id = 'f-' + name;
  if (Array.isArray(s.enum)) {
    return h('select', { id, name },
      h('option', { value: '', text: '(unset)' }),
      s.enum.map((v) => h('option', { value: JSON.stringify(v), text: String(v), selected: initial !== undefined && JSON.stringify(v) === JSON.stringify(initial) })));
  }
  switch (s.type) {
    case 'boolean':
      return h('select', { id, name }, h('option', { value: '', text: '(unset)' }),
        h('option', { value: 'true', text: 'true' }), h('option', { value: 'false', text: 'false' }));
    case 'integer':
    case 'number':
      return h('input', { id, name, type: 'number', step: s.type === 'integer' ? '1' : 'any', value: initial ?? '' });
    case 'string':
      return h('input', { id, name, type: 'text', value: initial ?? '', autocomplete: 'off' });
    case 'array':
      if (s.items && s.items.type === 'string' && !s.items.enum) {
        return h('input', { id, name, type: 'text', placeholder: 'comma, separated, values', 'data-kind': 'csv', value: initial ? initial.join(', ') : '' });
      }
  }
  return h('textarea', { id, name, rows: 3, placeholder: 'JSON', 'data-kind': 'json', value: initial === undefined ? '' : json(initial) });
}

function readInput(e, s) {
  const raw = e.value.trim();
  if (raw === '') return undefined;
  if (e.tagName === 'SELECT') return JSON.parse(raw);
  if (e.dataset.kind === 'csv') return raw.split(',').map((x) => x.trim()).filter(Boolean);
  if (e.dataset.kind === 'json') return JSON.parse(raw);
  if (s.type === 'integer') return parseInt(raw, 10);
  if (s.type === 'number') return parseFloat(raw);
  return raw;
}

// stateForm builds inputs for the non-message fields of a state schema.
// collect() returns the filled fields (unset ones are left out) or throws
// naming the field whose value is not valid.
export function stateForm(schema, initial = {}) {
  const props = (schema && schema.properties) || {};
  const rows = [];
  const inputs = [];
  for (const [name, s] of Object.entries(props)) {
    if (isMessages(s)) continue;
    const e = inputFor(name, s, initial[name]);
    inputs.push([name, s, e]);
    const hint = [s.type === 'array' && s.items ? `list<${s.items.type || 'any'}>` : s.type || 'any', s['x-reducer'] ? 'reducer ' + s['x-reducer'] : '']
      .filter(Boolean).join(', ');
    rows.push(h('label.field', { for: e.id }, h('span.name', name), h('span.hint', hint), e));
  }
  const el = h('div.state-form', rows.length ? rows : h('p.muted', 'This graph has no other state fields.'));
  return {
    el,
    collect() {
      const out = {};
      for (const [name, s, e] of inputs) {
        let v;
        try { v = readInput(e, s); } catch (err) { throw new Error(`field ${name}: not valid JSON (${err.message})`); }
        if (v !== undefined && !(typeof v === 'number' && isNaN(v))) out[name] = v;
      }
      return out;
    },
  };
}

// interruptForm renders a pending interrupt as a form. answer(value) is
// called with the resume value. field schemas come from the state schema.
export function interruptForm(intr, props, answer) {
  const v = intr.value;
  const p = v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  const debug = p.when === 'before' || p.when === 'after';
  const parts = [];
  const node = (intr.ns && intr.ns[0]) || p.node || '';
  const title = p.title || (debug ? `Paused ${p.when} ${p.node}` : `Waiting for an answer${node ? ' (node ' + node + ')' : ''}`);
  parts.push(h('div.intr-title', title));
  if (p.message) parts.push(h('p.intr-message', String(p.message)));
  else if (!debug && (typeof v !== 'object' || v === null)) parts.push(h('p.intr-message', String(v)));
  if (debug) {
    parts.push(h('p.muted', 'A breakpoint stopped the run. Continue runs the rest of the turn.'));
    parts.push(h('div.buttons', h('button.primary', { 'data-action': 'continue', on: { click: () => answer(undefined, true) } }, 'Continue')));
    return h('div.interrupt-card', { 'data-interrupt': intr.id || '' }, parts);
  }
  const fieldSchema = (p.field && props && props[p.field]) || {};
  const form = p.form && Array.isArray(p.form.fields) ? p.form : null;
  if (form) {
    const inputs = form.fields.map((f) => {
      const type = { date: 'date', time: 'time', number: 'number', integer: 'number', email: 'email' }[f.type] || 'text';
      const e = Array.isArray(f.options || f.enum)
        ? h('select', { name: f.name }, (f.options || f.enum).map((o) => h('option', { value: typeof o === 'object' ? o.value : o, text: typeof o === 'object' ? o.label || o.value : o })))
        : h('input', { name: f.name, type, required: !!f.required, placeholder: f.placeholder || '' });
      return [f, e];
    });
    const submit = (ev) => {
      ev.preventDefault();
      const out = {};
      for (const [f, e] of inputs) if (e.value !== '') out[f.name] = f.type === 'number' || f.type === 'integer' ? Number(e.value) : e.value;
      answer(out);
    };
    parts.push(h('form.intr-form', { on: { submit } },
      inputs.map(([f, e]) => h('label.field', h('span.name', (f.label || f.name) + (f.required ? ' *' : '')), e)),
      h('div.buttons', h('button.primary', { type: 'submit' }, 'Submit'))));
  } else {
    const buttons = [];
    if (Array.isArray(fieldSchema.enum)) {
      for (const o of fieldSchema.enum) buttons.push(h('button', { on: { click: () => answer(o) } }, String(o)));
    } else if (fieldSchema.type === 'boolean') {
      buttons.push(h('button.primary', { on: { click: () => answer(true) } }, 'Approve'), h('button', { on: { click: () => answer(false) } }, 'Reject'));
    } else {
      buttons.push(h('button.primary', { 'data-action': 'approve', on: { click: () => answer('yes') } }, 'Approve'),
        h('button', { 'data-action': 'reject', on: { click: () => answer('no') } }, 'Reject'));
    }
    parts.push(h('div.buttons', buttons));
    const text = h('input', { type: 'text', placeholder: 'or answer in words…', name: 'answer' });
    parts.push(h('form.intr-text', { on: { submit: (ev) => { ev.preventDefault(); if (text.value.trim()) answer(text.value.trim()); } } },
      text, h('button', { type: 'submit' }, 'Send')));
  }
  const area = h('textarea', { rows: 3, placeholder: '{"any": "JSON value"}' });
  const err = h('div.error-text');
  parts.push(h('details.intr-json', h('summary', 'Answer with JSON'), area,
    h('div.buttons', h('button', { on: { click: () => {
      try { answer(JSON.parse(area.value)); err.textContent = ''; } catch (e) { err.textContent = 'Not valid JSON: ' + e.message; }
    } } }, 'Send JSON')), err));
  parts.push(h('details', h('summary', 'Payload'), h('pre.json', { text: json(v) })));
  return h('div.interrupt-card', { 'data-interrupt': intr.id || '' }, parts);
}
