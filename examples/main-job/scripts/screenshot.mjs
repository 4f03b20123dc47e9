#!/usr/bin/env node
// `npm run screenshot` (in examples/main-job, after `npm run demo`): renders the HTML report of
// out/results.json in headless Chromium (Debian's /usr/bin/chromium, through playwright-core) at
// 1280 px and saves report.png — the top of the page: the one-line summary and the first task's legend,
// plots and policy × budget table (the other tasks' sections look the same).
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeReport } from '@lethe/eval/node';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
/** Page width (px): the width the report's Chromium test checks the layout at. */
const WIDTH = 1280;
const [resultsPath = 'out/results.json', pngPath = 'report.png'] = process.argv.slice(2);

if (!existsSync(CHROMIUM)) {
  console.error(`error: ${CHROMIUM} not found: install Debian's chromium package`);
  process.exit(1);
}
if (!existsSync(resultsPath)) {
  console.error(
    `error: ${resultsPath} not found: run the main job first (npm run demo at the root)`,
  );
  process.exit(2);
}
const results = JSON.parse(await readFile(resultsPath, 'utf8'));
const dir = await mkdtemp(join(tmpdir(), 'lethe-report-screenshot-'));
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  timeout: 30_000,
});
try {
  const files = await writeReport(dir, results);
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
  await page.goto(pathToFileURL(files.html).href, { waitUntil: 'load' });
  const bottom = await page
    .locator('section.task')
    .first()
    .evaluate((section) => section.getBoundingClientRect().bottom + window.scrollY);
  await page.screenshot({
    path: pngPath,
    fullPage: true,
    clip: { x: 0, y: 0, width: WIDTH, height: Math.ceil(bottom + 16) },
  });
  console.log(`wrote ${pngPath}`);
} finally {
  await browser.close();
  await rm(dir, { recursive: true, force: true });
}
