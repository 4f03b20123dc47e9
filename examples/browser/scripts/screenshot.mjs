#!/usr/bin/env node
// `npm run screenshot` (in examples/browser, after the build): the page mid-generation, saved
// as screenshot.png. Debian's Chromium (through playwright-core) opens the built page on WebGPU
// (SwiftShader without a GPU: slow enough to catch a lane mid-way), takes retrieval's held-out
// example 3 and compares NAMM with H2O at 25 %; the shot is taken once the second lane has
// streamed part of its answer.
import { openPageSession } from './page-session.mjs';

const [pngPath = 'screenshot.png'] = process.argv.slice(2);
const { url, browser, close } = await openPageSession();
try {
  const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
  await page.goto(`${url}?backend=webgpu`);
  const idle = () => page.waitForSelector('body[data-busy="false"]', { timeout: 300_000 });
  await idle();
  for (let i = 0; i < 3; i++) await page.click('#example');
  await page.waitForFunction(() => document.getElementById('prompt').value.includes('22'));
  await page.check('#compare');
  for (const [lane, policy] of [
    [0, 'namm'],
    [1, 'h2o'],
  ]) {
    await page.fill(`#policy-${lane}`, policy);
    await page.dispatchEvent(`#policy-${lane}`, 'change');
    await page.fill(`#budget-${lane}`, '0.25');
  }
  await page.click('#generate');
  await page.waitForFunction(
    () =>
      (document.querySelector('section.lane[data-lane="1"] .answer')?.textContent ?? '').length >=
      2,
    undefined,
    { timeout: 600_000, polling: 50 },
  );
  await page.screenshot({ path: pngPath, fullPage: true });
  console.log(`wrote ${pngPath}`);
  await idle();
} finally {
  await close();
}
