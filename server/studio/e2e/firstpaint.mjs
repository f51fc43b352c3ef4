// Measures how fast the Studio paints on a running server (not a test):
//   node server/studio/e2e/firstpaint.mjs http://127.0.0.1:8123
// prints [first contentful paint, graph drawn] in ms for 8 fresh loads.
import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
const out = [];
for (let i = 0; i < 8; i++) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(process.argv[2] + '/studio/#graph=slot_filling');
  await page.waitForSelector('svg.graph [data-node]');
  out.push(await page.evaluate(() => [Math.round(performance.getEntriesByName('first-contentful-paint')[0]?.startTime), Math.round(performance.getEntriesByName('studio:graph')[0]?.startTime)]));
  await ctx.close();
}
console.log(JSON.stringify(out));
await browser.close();
