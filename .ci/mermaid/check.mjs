// Parses Mermaid files with the real Mermaid parser and prints, as JSON, what
// Mermaid read from each: its vertices and edges with their labels as they
// would be shown (entities decoded, HTML reduced to its text).
//
//   node check.mjs FILE...
//
// Mermaid's label sanitizer needs a DOM; jsdom provides one.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

// shown returns a label as Mermaid renders it: its entity placeholders
// turned back into HTML entities (as Mermaid's decodeEntities does), then the
// HTML reduced to its text.
function shown(text) {
  const decoded = String(text ?? '')
    .replace(/ﬂ°°/g, '&#')
    .replace(/ﬂ°/g, '&')
    .replace(/¶ß/g, ';');
  const div = dom.window.document.createElement('div');
  div.innerHTML = decoded.replace(/<br\s*\/?>/gi, '\n');
  return div.textContent;
}

const results = [];
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  try {
    await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const vertices = [...diagram.db.getVertices().values()].map((v) => ({ id: v.id, text: shown(v.text) }));
    const edges = diagram.db.getEdges().map((e) => ({ start: e.start, end: e.end, text: shown(e.text), stroke: e.stroke }));
    results.push({ file, ok: true, type: diagram.type, vertices, edges });
  } catch (err) {
    results.push({ file, ok: false, error: String(err?.message ?? err) });
  }
}
process.stdout.write(JSON.stringify(results, null, 1) + '\n');
