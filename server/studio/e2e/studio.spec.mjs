// Browser scenarios for graphctl Studio, driven by e2e_test.go:
//   node studio.spec.mjs SCENARIO BASE_URL OUT_DIR GRAPHS_DIR [ARGS...]
// Each scenario opens the Studio in Debian's chromium with playwright-core,
// does what a user does, checks what the page shows, saves screenshots in
// OUT_DIR and prints "RESULT {json}" for the Go side to check over the API.
import { chromium } from 'playwright-core';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [scenario, base, out, graphsDir, ...args] = process.argv.slice(2);
const TIMEOUT = 20000;

function check(cond, msg) {
  if (!cond) throw new Error('check failed: ' + msg);
}

async function shot(page, name) {
  await page.screenshot({ path: join(out, name + '.png') });
  console.log('screenshot', name + '.png');
}

// watchNodes records, in the page, every class a graph node takes.
async function watchNodes(page) {
  await page.evaluate(() => {
    window.__seen = {};
    const obs = new MutationObserver((records) => {
      for (const r of records) {
        const g = r.target;
        if (!g.dataset || !g.dataset.node) continue;
        for (const c of ['running', 'done', 'interrupted', 'error']) {
          if (g.classList.contains(c)) (window.__seen[c] ||= []).push(g.dataset.node);
        }
      }
    });
    obs.observe(document.querySelector('svg.graph'), { attributes: true, attributeFilter: ['class'], subtree: true });
  });
}

async function seen(page, cls) {
  return page.evaluate((c) => (window.__seen && window.__seen[c]) || [], cls);
}

async function openGraph(page, graph, thread) {
  await page.goto(`${base}/studio/#graph=${graph}` + (thread ? `&thread=${thread}` : ''));
  await page.waitForSelector('svg.graph [data-node]', { timeout: TIMEOUT });
}

async function send(page, text) {
  await page.fill('#message', text);
  await page.press('#message', 'Enter');
}

async function nodeClass(page, node) {
  return page.getAttribute(`svg.graph g[data-node="${node}"]`, 'class');
}

async function threadId(page) {
  return page.getAttribute('#thread-id', 'title');
}

const scenarios = {
  // Pick the slot-filling graph, send a message, see the running node
  // highlighted live, the finished nodes with their durations, the streamed
  // reply and each node's update in the run log; a second message on the
  // same thread reaches the diagnosis tool.
  async chat(page) {
    await openGraph(page, 'slot_filling');
    check(await page.$eval('#graph-select', (s) => s.value) === 'slot_filling', 'graph select shows slot_filling');
    const labels = await page.$$eval('svg.graph .edge-label title', (ts) => ts.map((t) => t.textContent));
    check(labels.includes("goal == ''"), 'route conditions are edge labels: ' + labels.join(' | '));
    await page.click('details.fields summary');
    const goals = await page.$$eval('select#f-goal option', (os) => os.map((o) => o.textContent));
    check(JSON.stringify(goals) === '["(unset)","install_instruction","check_compatibility","diagnose_repair"]', 'the goal enum is a select: ' + goals);
    check(await page.$('input#f-model') && await page.getAttribute('input#f-symptoms', 'data-kind') === 'csv', 'string and list fields in the form');
    await page.click('details.fields summary');
    await shot(page, '00-graph');
    await watchNodes(page);
    await send(page, 'My dishwasher WDT780SAEM1 is leaking');
    await page.waitForSelector('.msg.assistant >> text=What would you like to do?', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    // Durations come from the engine (the thread's audit log) once the run ends.
    await page.waitForFunction(() => document.querySelector('#runlog').textContent.includes('engine time'), null, { timeout: TIMEOUT });
    const running = await seen(page, 'running');
    check(['extract', 'route_goal', 'ask_goal'].every((n) => running.includes(n)), 'nodes highlighted while running: ' + running);
    const log0 = await page.textContent('#runlog');
    for (const n of ['extract', 'route_goal', 'ask_goal']) {
      check((await nodeClass(page, n)).includes('done'), n + ' is marked done');
      const badge = await page.textContent(`svg.graph g[data-badge="${n}"] text.badge`);
      check(/\d+(\.\d+)? (µs|ms|s)$/.test(badge), `${n} shows its duration, got "${badge}"`);
      check(log0.includes(`${n} ${badge}`), `${n}'s badge ${badge} is the engine's duration: ${log0}`);
    }
    check(!(await nodeClass(page, 'greet')).includes('done'), 'greet did not run');
    const log = await page.textContent('#runlog');
    check(/extract → .*model/.test(log) && log.includes('ask_goal → messages'), 'run log shows node updates: ' + log);
    check((await page.$$('.msg.user')).length === 1, 'one user message');
    await shot(page, '01-chat-first-turn');

    await page.evaluate(() => { window.__seen = {}; });
    await send(page, 'I want to fix it');
    await page.waitForSelector('.msg.assistant >> text=TOOL USED: diagnose_repair', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    for (const n of ['check_requirements', 'route_tool', 'diagnose']) check((await nodeClass(page, n)).includes('done'), n + ' ran');
    check((await page.$$('.msg.assistant')).length === 2, 'two replies');
    await shot(page, '02-chat-tool');

    await page.click('nav.subtabs button[data-tab=state]');
    await page.waitForSelector('pre.state-now', { timeout: TIMEOUT });
    const state = await page.textContent('pre.state-now');
    check(state.includes('"goal": "diagnose_repair"') && state.includes('"model": "WDT780SAEM1"'), 'State tab shows the state now');
    await page.waitForSelector('table.runs tr:nth-child(3)', { timeout: TIMEOUT });
    await shot(page, '03-state');
    return { thread_id: await threadId(page) };
  },

  // A model's reply streams: the page shows it growing token by token
  // before the final message lands.
  async stream(page) {
    const [reply] = args;
    await openGraph(page, 'assistant');
    await page.evaluate(() => {
      window.__partials = [];
      new MutationObserver(() => {
        for (const m of document.querySelectorAll('.msg.streaming .text')) {
          const t = m.textContent;
          if (window.__partials[window.__partials.length - 1] !== t) window.__partials.push(t);
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    await send(page, 'Why does my dishwasher leak?');
    await page.waitForSelector(`.msg.assistant:not(.streaming) >> text=${reply}`, { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    const partials = await page.evaluate(() => window.__partials);
    check(partials.length >= 3, 'partial replies seen: ' + JSON.stringify(partials));
    check(partials.every((p) => reply.startsWith(p)) && partials[0].length < reply.length, 'partials grow toward the reply: ' + JSON.stringify(partials));
    check((await page.$$('.msg.assistant')).length === 1, 'one reply once the run is done');
    await shot(page, '05-streamed');
    return { partials: partials.length };
  },

  // A graph that asks a human: the interrupt shows as a form built from its
  // payload (the field's enum as buttons); answering it continues the run.
  async interrupt(page) {
    await openGraph(page, 'refund');
    check((await nodeClass(page, 'ask')).includes('interrupt-node'), 'the interrupt node is marked');
    await send(page, 'invoice 42');
    await page.waitForSelector('.interrupt-card >> text=Approve a refund for: invoice 42?', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.interrupted', { timeout: TIMEOUT });
    check((await nodeClass(page, 'ask')).includes('interrupted'), 'the waiting node is highlighted');
    await shot(page, '10-interrupt');
    await page.click('.interrupt-card button:text-is("yes")');
    await page.waitForSelector('.msg.assistant >> text=Your refund is approved.', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    check((await page.$$('.interrupt-card')).length === 0, 'no interrupt left');
    check((await nodeClass(page, 'approve')).includes('done'), 'approve ran');
    await shot(page, '11-interrupt-answered');
    return { thread_id: await threadId(page) };
  },

  // Each kind of answer form in turn: Approve/Reject buttons for a yes/no
  // field (Reject answers false), free text, and a JSON value.
  async answerForms(page) {
    await openGraph(page, 'review');
    await send(page, 'a new laptop');
    const card = (text) => page.waitForSelector(`.interrupt-card >> text=${text}`, { timeout: TIMEOUT });
    await card('Is this urgent?');
    await page.waitForSelector('#thread-status.interrupted', { timeout: TIMEOUT });
    await shot(page, '60-approve-reject');
    await page.click('.interrupt-card button:text-is("Reject")');
    await card('Add a note');
    await page.waitForSelector('#thread-status.interrupted', { timeout: TIMEOUT });
    await page.fill('.interrupt-card form.intr-text input[name=answer]', 'ship it by Friday');
    await shot(page, '61-free-text');
    await page.click('.interrupt-card form.intr-text button[type=submit]');
    await card('Any details?');
    await page.waitForSelector('#thread-status.interrupted', { timeout: TIMEOUT });
    await page.click('.interrupt-card details.intr-json summary');
    await page.fill('.interrupt-card details.intr-json textarea', 'not json');
    await page.click('.interrupt-card details.intr-json button:text-is("Send JSON")');
    await page.waitForSelector('.interrupt-card .error-text >> text=Not valid JSON', { timeout: TIMEOUT });
    await page.fill('.interrupt-card details.intr-json textarea', '{"priority": 2, "tags": ["it"]}');
    await shot(page, '62-json');
    await page.click('.interrupt-card details.intr-json button:text-is("Send JSON")');
    await page.waitForSelector('.msg.assistant >> text=Filed: ship it by Friday', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    check((await page.$$('.interrupt-card')).length === 0, 'no interrupt left');
    await shot(page, '63-answered');
    return { thread_id: await threadId(page) };
  },

  // Two interrupts pending at once (parallel branches): each has its own
  // card; answering one (LangGraph's resume map keyed by interrupt id)
  // leaves the other waiting, answering it finishes the run.
  async multiInterrupt(page) {
    const [thread] = args;
    await openGraph(page, 'parallel_approval', thread);
    await page.waitForFunction(() => document.querySelectorAll('.interrupt-card').length === 2, null, { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.interrupted', { timeout: TIMEOUT });
    await shot(page, '70-two-interrupts');
    const manager = page.locator('.interrupt-card', { hasText: 'Manager:' });
    await manager.locator('button:text-is("approve")').click();
    await page.waitForSelector('#thread-status.interrupted', { timeout: TIMEOUT });
    await page.waitForFunction(() => {
      const cards = [...document.querySelectorAll('.interrupt-card')];
      return cards.length === 1 && cards[0].textContent.includes('Finance:');
    }, null, { timeout: TIMEOUT });
    await shot(page, '71-one-left');
    await page.locator('.interrupt-card', { hasText: 'Finance:' }).locator('button:text-is("reject")').click();
    await page.waitForSelector('.msg.assistant >> text=Rejected by finance', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    check((await page.$$('.interrupt-card')).length === 0, 'no interrupt left');
    await shot(page, '72-answered');
    return {};
  },

  // A breakpoint (pause before a node, clicked on the graph) stops the run;
  // Continue runs the rest.
  async breakpoint(page) {
    await openGraph(page, 'slot_filling');
    await page.click('svg.graph g[data-node="check_requirements"]');
    check((await nodeClass(page, 'check_requirements')).includes('paused-before'), 'breakpoint shown');
    await send(page, 'My WDT780SAEM1 is leaking, please fix it');
    await page.waitForSelector('.interrupt-card >> text=Paused before check_requirements', { timeout: TIMEOUT });
    await shot(page, '20-breakpoint');
    await page.click('svg.graph g[data-node="check_requirements"]');
    await page.click('.interrupt-card button[data-action=continue]');
    await page.waitForSelector('.msg.assistant >> text=TOOL USED: diagnose_repair', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    return { thread_id: await threadId(page) };
  },

  // Time travel: the timeline lists the checkpoints; one shows its full
  // state and its diff against the previous one; editing the state there
  // (as the node that wrote it) forks the thread and runs on; regenerate
  // reruns the last step.
  async timetravel(page) {
    await openGraph(page, 'slot_filling');
    await send(page, 'My dishwasher WDT780SAEM1 is leaking');
    await page.waitForSelector('.msg.assistant >> text=What would you like to do?', { timeout: TIMEOUT });
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    const thread = await threadId(page);
    await page.click('nav.subtabs button[data-tab=timeline]');
    await page.waitForSelector('ol.cps li', { timeout: TIMEOUT });
    const before = (await page.$$('ol.cps li')).length;
    const extractCp = page.locator('ol.cps li', { has: page.locator('span.writer', { hasText: /^extract$/ }) }).first();
    await extractCp.click();
    const checkpoint = await extractCp.getAttribute('data-checkpoint');
    await page.waitForSelector('table.diff', { timeout: TIMEOUT });
    const diffText = await page.textContent('table.diff');
    check(diffText.includes('model') && diffText.includes('WDT780SAEM1'), 'diff shows what extract wrote: ' + diffText);
    await shot(page, '30-timeline');
    await page.click('#edit-state summary');
    const values = JSON.parse(await page.inputValue('textarea.edit-values'));
    values.goal = 'diagnose_repair';
    await page.fill('textarea.edit-values', JSON.stringify(values, null, 2));
    check(await page.$eval('#as-node', (s) => s.value) === 'extract', 'as_node defaults to the node that wrote the checkpoint');
    await shot(page, '31-edit-state');
    await page.click('#fork');
    // The re-run's answer shows in Chat and stays there once the run ends;
    // the fork's thread has no trace of the first answer.
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    await page.waitForSelector('nav.subtabs button[data-tab=chat].active', { timeout: TIMEOUT });
    await page.waitForSelector('.msg.assistant >> text=TOOL USED: diagnose_repair', { timeout: TIMEOUT });
    const answers = await page.$$eval('.msg.assistant', (ms) => ms.map((m) => m.textContent));
    check(answers.length === 1 && !answers[0].includes('What would you like to do?'), 'the fork shows only its answer: ' + JSON.stringify(answers));
    await shot(page, '32-forked');
    await page.click('nav.subtabs button[data-tab=timeline]');
    await page.waitForSelector('ol.cps li.forked', { timeout: TIMEOUT });
    const afterFork = (await page.$$('ol.cps li')).length;
    check(afterFork > before, `the fork added checkpoints (${before} → ${afterFork})`);
    await shot(page, '33-timeline-forked');
    await page.click('#regenerate');
    await page.waitForSelector('#thread-status.idle', { timeout: TIMEOUT });
    await page.click('nav.subtabs button[data-tab=timeline]');
    await page.waitForFunction((n) => document.querySelectorAll('ol.cps li').length > n, afterFork, { timeout: TIMEOUT });
    await shot(page, '34-regenerated');
    return { thread_id: thread, edited_checkpoint: checkpoint };
  },

  // A broken graph file: its diagnostics (file:line:col, code, source line)
  // show in the page while the last good version stays selectable; fixing
  // the file clears them.
  async diagnostics(page) {
    await openGraph(page, 'refund');
    const file = join(graphsDir, 'refund.cue');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, good.replace('to: "approve"', 'to: "aprove"'));
    await page.waitForSelector('#problems:not([hidden])', { timeout: TIMEOUT });
    const text = await page.textContent('#problems');
    check(/refund\.cue:\d+:\d+/.test(text), 'file:line:col shown: ' + text);
    check(text.includes('aprove') && text.includes('^'), 'source line with a caret shown: ' + text);
    check(text.includes('last good version'), 'says the last good version is kept');
    const options = await page.$$eval('#graph-select option', (os) => os.map((o) => o.value));
    check(options.includes('refund'), 'the last good refund graph is still offered');
    await shot(page, '40-diagnostics');
    writeFileSync(file, good.replace('Your refund is approved.', 'Approved: your refund is on its way.'));
    await page.waitForSelector('#problems', { state: 'hidden', timeout: TIMEOUT });
    return {};
  },

  // Threads: list, search and open one; store: namespaces, items, search.
  async browse(page) {
    const [thread] = args;
    await page.goto(`${base}/studio/#view=threads&graph=slot_filling`);
    await page.waitForSelector(`tr[data-thread="${thread}"]`, { timeout: TIMEOUT });
    const rows = (await page.$$('table.threads tr[data-thread]')).length;
    check(rows >= 2, 'both threads listed, got ' + rows);
    await page.fill('#thread-query', thread.slice(-8));
    await page.waitForFunction(() => document.querySelectorAll('table.threads tr[data-thread]').length === 1, null, { timeout: TIMEOUT });
    await shot(page, '50-threads');
    await page.click(`tr[data-thread="${thread}"]`);
    await page.waitForSelector('.msg.assistant', { timeout: TIMEOUT });
    check(await threadId(page) === thread, 'the thread opened');
    await page.click('nav.tabs button[data-view=store]');
    await page.waitForSelector('li[data-ns="memories/u1"]', { timeout: TIMEOUT });
    await page.click('li[data-ns="memories/u1"]');
    await page.waitForSelector('.item >> text=likes green tea', { timeout: TIMEOUT });
    await page.fill('#store-query', 'coffee');
    await page.waitForSelector('.item >> text=drinks coffee', { timeout: TIMEOUT });
    await shot(page, '51-store');
    return {};
  },

  // A server with API keys: the page asks for one, keeps it in session
  // storage only, and works with it.
  async apikey(page) {
    const [key] = args;
    await page.goto(`${base}/studio/`);
    await page.waitForSelector('#key-dialog[open]', { timeout: TIMEOUT });
    await shot(page, '60-key-prompt');
    await page.fill('#key-input', 'wrong-key');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#key-dialog[open] >> text=did not accept', { timeout: TIMEOUT });
    await page.fill('#key-input', key);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('svg.graph [data-node]', { timeout: TIMEOUT });
    const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('graphctl.apiKey'), local: JSON.stringify(localStorage) }));
    check(stored.session === key && !stored.local.includes(key), 'the key is in session storage only');
    return {};
  },
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));
page.on('console', (m) => { if (m.type() === 'error') console.log('console error:', m.text()); });
let code = 0;
try {
  const fn = scenarios[scenario];
  if (!fn) throw new Error('unknown scenario ' + scenario);
  const result = await fn(page);
  check(errors.length === 0, 'no script errors in the page: ' + errors.join('; '));
  console.log('RESULT ' + JSON.stringify(result));
} catch (e) {
  code = 1;
  console.log(e.stack || String(e));
  try { await shot(page, 'failure-' + scenario); } catch { /* page gone */ }
} finally {
  await browser.close();
}
process.exit(code);
