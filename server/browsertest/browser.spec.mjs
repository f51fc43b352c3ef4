// Drives page.jsx (the SDK's useStream) in Debian's chromium with
// playwright-core: node browser.spec.mjs PAGE_URL
// PAGE_URL carries ?api=URL of graphctl serve, on another origin.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";

const pageURL = process.argv[2];
const [first, second, third] = JSON.parse(process.env.GRAPHCTL_BROWSERTEST_REPLIES);
const browser = await chromium.launch({ executablePath: process.env.GRAPHCTL_CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage();
const problems = [];
page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
page.on("console", (msg) => {
  if (msg.type() === "error") problems.push(`console error: ${msg.text()} (${msg.location().url})`);
});

const step = async (name, fn) => {
  try {
    await fn();
    if (problems.length) throw new Error(problems.join("\n"));
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}: ${err.stack || err}`);
    console.error(await page.content().catch(() => ""));
    await browser.close();
    process.exit(1);
  }
};

const app = page.getByTestId("app");
const idle = () => page.waitForSelector('[data-testid="app"][data-loading="false"]');
const messages = () =>
  page.$$eval('[data-testid="message"]', (els) =>
    els.map((el) => ({ type: el.dataset.type, id: el.dataset.id, branches: Number(el.dataset.branches), text: el.querySelector('[data-testid="text"]').textContent })),
  );
const send = async (text) => {
  await page.getByTestId("input").fill(text);
  await page.getByTestId("send").click();
};
const waitForText = (text) =>
  page.waitForFunction((t) => [...document.querySelectorAll('[data-testid="message"]')].some((el) => el.textContent.includes(t)), text);

await step("the page loads from its own origin", async () => {
  await page.goto(pageURL);
  await idle();
  assert.notEqual(new URL(pageURL).origin, new URL(new URL(pageURL).searchParams.get("api")).origin);
});

await step("send a message and see the streamed answer", async () => {
  await send("hello there");
  await waitForText(first);
  await idle();
  const list = await messages();
  assert.deepEqual(list.map((m) => m.type), ["human", "ai"]);
  assert.equal(list[1].text, first);
  assert.ok((await app.getAttribute("data-thread-id")).length > 0);
});

await step("answer an interrupt", async () => {
  await send("please book a table for two");
  await page.getByTestId("interrupt").waitFor();
  assert.match(await page.getByTestId("interrupt").textContent(), /Book it\?/);
  await page.getByTestId("approve").click();
  await waitForText("Booked.");
  await idle();
  assert.equal(await page.getByTestId("interrupt").count(), 0);
});

let before;
await step("regenerate the last answer from its parent checkpoint", async () => {
  await send("tell me more");
  await waitForText(second);
  await idle();
  before = (await messages()).at(-1);
  assert.equal(before.text, second);
  await page.getByTestId("regenerate").last().click();
  await waitForText(third);
  await idle();
  const list = await messages();
  const last = list.at(-1);
  assert.equal(last.text, third);
  assert.notEqual(last.id, before.id, "the regenerated answer is a new message");
  assert.ok(!list.some((m) => m.text === second), "the old answer is replaced on the current branch");
  assert.deepEqual(list.map((m) => m.text).slice(0, 5), ["hello there", first, "please book a table for two", "Booked.", "tell me more"]);
  // useStream sees the fork in the history: the answer has two branches.
  await page.waitForFunction(() => Number([...document.querySelectorAll('[data-testid="message"]')].at(-1).dataset.branches) === 2);
});

await step("read the thread list", async () => {
  const threadId = await app.getAttribute("data-thread-id");
  await page.getByTestId("list-threads").click();
  await page.getByTestId("threads").waitFor();
  const ids = await page.$$eval('[data-testid="thread"]', (els) => els.map((el) => [el.dataset.threadId, el.dataset.status]));
  assert.ok(ids.some(([id, status]) => id === threadId && status === "idle"), `thread ${threadId} in ${JSON.stringify(ids)}`);
});

await browser.close();
console.log("all ok");
