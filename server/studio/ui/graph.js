// Draws a graph (the JSON of GET /assistants/{id}/graph) as SVG with a small
// layered layout: back edges of cycles are set aside, nodes are put in layers
// by longest path from the start, long edges get bend points, layers are
// ordered by barycenters, and edges are drawn as curves through their bend
// points with the route condition as label.

const SVG = 'http://www.w3.org/2000/svg';
const NODE_H = 46, LAYER_GAP = 96, NODE_GAP = 36, DUMMY_W = 16, PAD = 24;

// Node types that suspend the thread for a human.
export const INTERRUPT_TYPES = new Set(['interrupt', 'hitl']);

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function label(n) {
  if (n.id === '__start__') return 'START';
  if (n.id === '__end__') return 'END';
  return n.id;
}

function textWidth(s, px) { return s.length * px * 0.6; }

// layout returns positioned nodes {id, x, y, w, h, layer} and edges with
// points, for a diagram {nodes, edges}.
export function layout(diagram) {
  const nodes = new Map();
  diagram.nodes.forEach((n, i) => {
    const type = (n.data && n.data.node_type) || '';
    const w = Math.max(textWidth(label(n), 14), textWidth(type, 11)) + 28;
    nodes.set(n.id, { id: n.id, type, data: n.data || {}, w: Math.max(w, 90) + (INTERRUPT_TYPES.has(type) ? 20 : 0), h: NODE_H, order: i, out: [], in: [] });
  });
  const edges = diagram.edges.filter((e) => nodes.has(e.source) && nodes.has(e.target))
    .map((e, i) => ({ ...e, i, label: typeof e.data === 'string' ? e.data : '' }));
  for (const e of edges) { nodes.get(e.source).out.push(e); nodes.get(e.target).in.push(e); }

  // Back edges: found by DFS from the start in declaration order.
  const state = new Map();
  const visit = (id) => {
    state.set(id, 1);
    for (const e of nodes.get(id).out) {
      const s = state.get(e.target);
      if (s === 1) e.back = true;
      else if (!s) visit(e.target);
    }
    state.set(id, 2);
  };
  if (nodes.has('__start__')) visit('__start__');
  for (const id of nodes.keys()) if (!state.get(id)) visit(id);
  for (const e of edges) if (e.source === e.target) e.back = true;

  // Layers: longest path over forward edges.
  const layer = new Map();
  const depth = (id, seen = new Set()) => {
    if (layer.has(id)) return layer.get(id);
    if (seen.has(id)) return 0;
    seen.add(id);
    let d = 0;
    for (const e of nodes.get(id).in) if (!e.back) d = Math.max(d, depth(e.source, seen) + 1);
    layer.set(id, d);
    return d;
  };
  for (const id of nodes.keys()) depth(id);
  let maxLayer = 0;
  for (const [id, l] of layer) if (id !== '__end__') maxLayer = Math.max(maxLayer, l);
  if (nodes.has('__end__')) layer.set('__end__', maxLayer + 1);
  for (const [id, n] of nodes) n.layer = layer.get(id);

  // Bend points: a chain of dummy nodes for each forward edge spanning layers.
  const layers = [];
  const put = (n) => { (layers[n.layer] ||= []).push(n); };
  for (const n of nodes.values()) put(n);
  const chains = new Map();
  for (const e of edges) {
    if (e.back) continue;
    const a = nodes.get(e.source), b = nodes.get(e.target);
    const chain = [a];
    for (let l = a.layer + 1; l < b.layer; l++) {
      const d = { id: `~${e.i}.${l}`, dummy: true, w: DUMMY_W, h: NODE_H, layer: l, order: a.order };
      put(d);
      chain.push(d);
    }
    chain.push(b);
    chains.set(e, chain);
  }
  const ups = new Map(), downs = new Map();
  const link = (m, k, v) => { if (!m.has(k)) m.set(k, []); m.get(k).push(v); };
  for (const chain of chains.values()) {
    for (let i = 0; i + 1 < chain.length; i++) { link(downs, chain[i], chain[i + 1]); link(ups, chain[i + 1], chain[i]); }
  }

  // Ordering: declaration order, then barycenter sweeps down and up.
  for (const L of layers) if (L) L.sort((a, b) => a.order - b.order);
  const pos = new Map();
  const index = () => layers.forEach((L) => L && L.forEach((n, i) => pos.set(n, i)));
  index();
  const sweep = (from, nb) => {
    for (const L of from) {
      if (!L) continue;
      const bc = new Map();
      for (const n of L) {
        const ns = nb.get(n) || [];
        bc.set(n, ns.length ? ns.reduce((s, m) => s + pos.get(m), 0) / ns.length : pos.get(n));
      }
      L.sort((a, b) => bc.get(a) - bc.get(b) || a.order - b.order);
      L.forEach((n, i) => pos.set(n, i));
    }
  };
  for (let k = 0; k < 6; k++) {
    sweep(layers.slice(1), ups);
    sweep(layers.slice(0, -1).reverse(), downs);
  }
  sweep(layers.slice(1), ups);

  // Coordinates: layers left to right packed, then pulled toward the
  // average x of their neighbours without overlapping.
  for (const L of layers) {
    if (!L) continue;
    let x = 0;
    for (const n of L) { n.x = x + n.w / 2; x += n.w + NODE_GAP; }
  }
  const relax = (nb) => {
    for (const L of layers) {
      if (!L) continue;
      for (const n of L) {
        const ns = nb.get(n) || [];
        if (ns.length) n.want = ns.reduce((s, m) => s + m.x, 0) / ns.length;
        else n.want = n.x;
      }
      // Place left to right at want, pushing right to keep gaps; then back.
      for (let i = 0; i < L.length; i++) {
        const n = L[i];
        n.x = n.want;
        if (i > 0) n.x = Math.max(n.x, L[i - 1].x + L[i - 1].w / 2 + NODE_GAP + n.w / 2);
      }
      for (let i = L.length - 2; i >= 0; i--) {
        const n = L[i], r = L[i + 1];
        const max = r.x - r.w / 2 - NODE_GAP - n.w / 2;
        if (n.x > max) n.x = Math.max(max, n.want - 1e9);
      }
    }
  };
  for (let k = 0; k < 4; k++) { relax(ups); relax(downs); }
  relax(ups);

  let minX = Infinity, maxX = -Infinity;
  for (const L of layers) if (L) for (const n of L) { minX = Math.min(minX, n.x - n.w / 2); maxX = Math.max(maxX, n.x + n.w / 2); }
  const shift = PAD - minX;
  for (const L of layers) if (L) for (const n of L) { n.x += shift; n.y = PAD + n.layer * (NODE_H + LAYER_GAP) + NODE_H / 2; }
  // Room on the right for the duration badges.
  let width = maxX - minX + 2 * PAD + 56;
  const height = PAD * 2 + layers.length * (NODE_H + LAYER_GAP) - LAYER_GAP;

  // Edge points.
  const out = [];
  let backLane = 0;
  for (const e of edges) {
    const a = nodes.get(e.source), b = nodes.get(e.target);
    let pts;
    if (!e.back) {
      pts = chains.get(e).map((n, i, ch) => {
        if (i === 0) return [n.x, n.y + n.h / 2];
        if (i === ch.length - 1) return [n.x, n.y - n.h / 2];
        return [n.x, n.y];
      });
      // Spread edges leaving one node.
      const sib = a.out.filter((x) => !x.back);
      if (sib.length > 1) {
        const k = sib.indexOf(e);
        pts[0][0] += (k - (sib.length - 1) / 2) * Math.min(14, (a.w - 20) / sib.length);
      }
    } else {
      // Loop back around the right of every layer it passes, running
      // through the gaps between layers so that it crosses no node: down
      // out of the source, right, up, left above the target, down into it.
      backLane++;
      let right = 0;
      for (let l = Math.min(a.layer, b.layer); l <= Math.max(a.layer, b.layer); l++) {
        for (const n of layers[l] || []) right = Math.max(right, n.x + n.w / 2);
      }
      const xr = right + 14 * backLane;
      const yBelow = a.y + a.h / 2 + 10 + 5 * (backLane % 4), yAbove = b.y - b.h / 2 - 10 - 5 * (backLane % 4);
      const xa = a.x + a.w / 4, xb = b.x + b.w / 4;
      width = Math.max(width, xr + PAD);
      pts = [[xa, a.y + a.h / 2], [xa, yBelow], [xr, yBelow], [xr, yAbove], [xb, yAbove], [xb, b.y - b.h / 2]];
    }
    out.push({ ...e, points: pts });
  }
  return { nodes: [...nodes.values()], edges: out, width, height };
}

function pathOf(pts, back) {
  if (back) return 'M' + pts.map((p) => p.join(',')).join(' L');
  let d = `M${pts[0][0]},${pts[0][1]}`;
  for (let i = 1; i < pts.length; i++) {
    const [x0, y0] = pts[i - 1], [x1, y1] = pts[i];
    const my = (y0 + y1) / 2;
    d += ` C${x0},${my} ${x1},${my} ${x1},${y1}`;
  }
  return d;
}

function truncate(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

// render draws a layout into container and returns a handle to mark nodes:
// set(id, status, text) with status running | done | error | interrupted |
// '' and onClick(fn(id)).
export function render(container, diagram, opts = {}) {
  const L = layout(diagram);
  container.textContent = '';
  const svg = el('svg', { viewBox: `0 0 ${L.width} ${L.height}`, width: L.width, height: L.height, class: 'graph', role: 'img',
    'aria-label': 'graph of ' + (opts.name || 'the assistant') });
  const defs = el('defs', {}, svg);
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }, marker);
  const gEdges = el('g', { class: 'edges' }, svg);
  const gLabels = el('g', { class: 'labels' }, svg);
  const gNodes = el('g', { class: 'nodes' }, svg);
  // Badges (durations, "waiting") sit above every node, so that a badge
  // reaching over a neighbour stays readable.
  const gBadges = el('g', { class: 'badges' }, svg);
  const edgeEls = [];
  for (const e of L.edges) {
    const p = el('path', { d: pathOf(e.points, e.back), class: 'edge' + (e.conditional ? ' conditional' : '') + (e.back ? ' back' : ''),
      'marker-end': 'url(#arrow)', 'data-source': e.source, 'data-target': e.target }, gEdges);
    edgeEls.push(p);
    if (e.label) {
      // Labels of one node's edges are staggered along their first segment
      // (ordered by where the edges go) so that they do not overlap.
      const sib = L.edges.filter((x) => x.source === e.source && x.label && !x.back)
        .sort((a, b) => a.points[1][0] - b.points[1][0]);
      const k = sib.indexOf(e), at = sib.length > 1 ? 0.22 + 0.56 * k / (sib.length - 1) : 0.45;
      const [x0, y0] = e.points[0], [x1, y1] = e.points[1];
      const lx = e.back ? e.points[2][0] : x0 + (x1 - x0) * at, ly = e.back ? (e.points[2][1] + e.points[3][1]) / 2 : y0 + (y1 - y0) * at;
      const text = truncate(e.label, 30);
      const w = textWidth(text, 10.5) + 10;
      const cx = Math.min(Math.max(lx, w / 2 + 2), L.width - w / 2 - 2);
      const g = el('g', { class: 'edge-label', transform: `translate(${cx},${ly})` }, gLabels);
      el('rect', { x: -w / 2, y: -9, width: w, height: 18, rx: 4 }, g);
      const t = el('text', { 'text-anchor': 'middle', dy: 4 }, g);
      t.textContent = text;
      el('title', {}, g).textContent = e.label;
    }
  }
  const nodeEls = new Map();
  for (const n of L.nodes) {
    if (n.dummy) continue;
    const special = n.id === '__start__' || n.id === '__end__';
    const kind = special ? 'terminal' : INTERRUPT_TYPES.has(n.type) ? 'interrupt-node' : '';
    const g = el('g', { class: `node ${kind}`, transform: `translate(${n.x},${n.y})`, 'data-node': n.id, tabindex: special ? -1 : 0 }, gNodes);
    el('rect', { x: -n.w / 2, y: -n.h / 2, width: n.w, height: n.h, rx: special ? n.h / 2 : 8 }, g);
    const t = el('text', { 'text-anchor': 'middle', dy: special ? 5 : -2, class: 'name' }, g);
    t.textContent = label(n);
    if (!special) {
      const ty = el('text', { 'text-anchor': 'middle', dy: 14, class: 'type' }, g);
      ty.textContent = n.type;
      if (INTERRUPT_TYPES.has(n.type)) {
        // A pause sign: this node stops the run to ask a human.
        const x = -n.w / 2 + 8, y = -7;
        el('rect', { x, y, width: 3.5, height: 14, rx: 1, class: 'pause-icon' }, g);
        el('rect', { x: x + 6, y, width: 3.5, height: 14, rx: 1, class: 'pause-icon' }, g);
      }
    }
    const bg = el('g', { class: 'badge-box', transform: `translate(${n.x + n.w / 2 + 3},${n.y})`, 'data-badge': n.id }, gBadges);
    const badgeRect = el('rect', { x: 0, y: -8, width: 0, height: 16, rx: 4 }, bg);
    const badge = el('text', { x: 3, y: 4, 'text-anchor': 'start', class: 'badge' }, bg);
    const bp = el('circle', { cx: -n.w / 2, cy: -n.h / 2, r: 6, class: 'breakpoint' }, g);
    el('title', {}, g).textContent = special ? label(n) :
      `${n.id} (${n.type})${n.data.description ? '\n' + n.data.description : ''}\nclick: pause before this node`;
    nodeEls.set(n.id, { g, badge, badgeRect, bg, bp });
    if (!special && opts.onClick) {
      g.addEventListener('click', () => opts.onClick(n.id));
      g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); opts.onClick(n.id); } });
    }
  }
  container.appendChild(svg);
  // Shown whole when it fits; a tall graph is shrunk to fit the pane's
  // height only down to 70% and scrolls beyond that, so it stays readable.
  const fit = () => {
    const w = container.clientWidth || L.width, hgt = window.innerHeight - container.getBoundingClientRect().top - 12;
    const k = Math.min(1, w / L.width, Math.max(0.7, hgt / L.height));
    svg.style.width = L.width * k + 'px';
    svg.style.height = L.height * k + 'px';
  };
  fit();
  new ResizeObserver(fit).observe(container);
  return {
    set(id, status, text) {
      const n = nodeEls.get(id);
      if (!n) return;
      for (const e of [n.g, n.bg]) {
        e.classList.remove('running', 'done', 'error', 'interrupted');
        if (status) e.classList.add(status);
      }
      n.badge.textContent = text || '';
      n.badgeRect.setAttribute('width', text ? textWidth(text, 11) + 6 : 0);
      // Keep the running node in view on a graph taller than the pane.
      if (status === 'running' && n.g.scrollIntoView) n.g.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    },
    clear() { for (const id of nodeEls.keys()) this.set(id, ''); edgeEls.forEach((p) => p.classList.remove('taken')); },
    breakpoint(id, on) { const n = nodeEls.get(id); if (n) n.g.classList.toggle('paused-before', on); },
    taken(source, target) {
      for (const p of edgeEls) if (p.dataset.source === source && p.dataset.target === target) p.classList.add('taken');
    },
  };
}
