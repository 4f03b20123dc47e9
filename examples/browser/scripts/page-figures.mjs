#!/usr/bin/env node
// `npm run bench` (in examples/browser, after the build): the page's figures for its README —
// what a visitor downloads (raw and gzipped: the page's JS and CSS, the one tfjs wasm binary a
// browser without cross-origin isolation fetches, the first model), and, in Debian's Chromium
// (through playwright-core) on wasm and on WebGPU (SwiftShader without a GPU), the load time
// (navigation to the first model loaded, a fresh browser context each run: nothing cached), and
// time to first token and tokens/s generating 64 tokens on the LM under H2O at 25 %. Each figure
// is given as its range over the runs (default 3: `node scripts/page-figures.mjs 5`).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { openPageSession } from './page-session.mjs';

const runs = Number(process.argv[2] ?? 3);
const dist = join(import.meta.dirname, '..', 'dist');

/** Raw and gzipped bytes of every file below `dir` whose name passes `keep`. */
function sizes(dir, keep = () => true) {
  let raw = 0;
  let gzip = 0;
  for (const entry of readdirSync(dir, { recursive: true })) {
    const path = join(dir, entry);
    if (!statSync(path).isFile() || !keep(entry)) continue;
    const bytes = readFileSync(path);
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
  }
  return { raw, gzip };
}

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;
const range = (values, digits) => {
  const lo = Math.min(...values).toFixed(digits);
  const hi = Math.max(...values).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
};

const download = [
  ['page JS and CSS (page, worker, tfjs, Lethe)', sizes(join(dist, 'assets'))],
  [
    'tfjs wasm binary (SIMD, the one fetched)',
    sizes(join(dist, 'wasm'), (f) => f.endsWith('-simd.wasm') && !f.includes('threaded')),
  ],
  ['retrieval model (the first one loaded)', sizes(join(dist, 'models', 'retrieval'))],
  ['every shipped model and policy', sizes(join(dist, 'models'))],
];

const { url, browser, close } = await openPageSession();
const figures = {};
try {
  for (const backend of ['wasm', 'webgpu']) {
    const measured = { load: [], ttft: [], tps: [] };
    for (let run = 0; run < runs; run++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(`${url}?backend=${backend}`);
      await page.waitForSelector('body[data-busy="false"]', { timeout: 300_000 });
      measured.load.push(performance.now() - started);
      await page.selectOption('#model', 'lm');
      await page.waitForSelector('body[data-busy="false"]', { timeout: 300_000 });
      await page.waitForFunction(() => document.getElementById('prompt').value !== '');
      await page.fill('#policy-0', 'h2o');
      await page.dispatchEvent('#policy-0', 'change');
      await page.fill('#budget-0', '0.25');
      await page.fill('#max-tokens', '64');
      await page.click('#generate');
      await page.waitForSelector('section.lane[data-lane="0"][data-state="done"]', {
        timeout: 600_000,
      });
      const figure = (term) =>
        page.textContent(`section.lane[data-lane="0"] dd[data-figure="${term}"]`);
      measured.ttft.push(Number.parseFloat(await figure('time to first token')));
      measured.tps.push(Number.parseFloat(await figure('tokens/s')));
      await context.close();
      console.error(`${backend} run ${run + 1}/${runs} done`);
    }
    figures[backend] = measured;
  }
} finally {
  await close();
}

console.log('| download | raw | gzipped |\n|---|--:|--:|');
for (const [what, { raw, gzip }] of download) console.log(`| ${what} | ${kb(raw)} | ${kb(gzip)} |`);
console.log(
  `\n| backend | page load to model ready (ms) | time to first token (ms) | tokens/s |\n|---|--:|--:|--:|`,
);
for (const [backend, m] of Object.entries(figures)) {
  console.log(`| ${backend} | ${range(m.load, 0)} | ${range(m.ttft, 0)} | ${range(m.tps, 1)} |`);
}
console.log(`\n(${runs} runs each; LM, H2O at 25 %, 64 new tokens)`);
