import { fileURLToPath } from 'node:url';
import {
  launchChromiumWithWebGpu,
  openSecurePage,
  skipWithoutChromium,
} from '@lethe/test-utils/chromium';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Case } from './attention-case';
import type { runCases } from './browser-entry';
import type { ObservationCase } from './observation-case';

// The device cache and its kernels as a web page runs them: the package's code bundled for the
// browser and run in Debian's Chromium on its own WebGPU (SwiftShader, Chromium's software
// adapter), each case's attention within the stated bound of float64 attention computed in the
// page. In CI (CI=true) the test fails when Chromium is missing; elsewhere it is skipped.
const skip = skipWithoutChromium('[@lethe/kernels-webgpu] browser kernel test');

const base = {
  pageSize: 16,
  chunk: 32,
  truncate: 1,
  after: 9,
  spread: 2,
  keep: 0.6,
} as const;

/** GQA 1/2/4, head dims 16–128, gates, sparse and biased reads, chunks, 2–4 splits. */
const CASES: Case[] = [
  {
    ...base,
    kvHeads: 2,
    group: 2,
    headDim: 16,
    gated: false,
    before: 500,
    queries: 1,
    sparse: false,
    biased: false,
    chunked: true,
    seed: 1,
  },
  {
    ...base,
    kvHeads: 1,
    group: 4,
    headDim: 64,
    gated: true,
    before: 300,
    queries: 3,
    sparse: true,
    biased: true,
    chunked: true,
    seed: 2,
  },
  {
    ...base,
    kvHeads: 3,
    group: 1,
    headDim: 128,
    gated: false,
    before: 260,
    queries: 2,
    sparse: true,
    biased: false,
    chunked: false,
    seed: 3,
  },
  {
    ...base,
    kvHeads: 2,
    group: 2,
    headDim: 32,
    gated: true,
    before: 129,
    queries: 4,
    sparse: false,
    biased: true,
    chunked: false,
    seed: 4,
  },
];

/** One launch over three sequences of the second case's shape, each with its own history. */
const BATCH: Case[] = [300, 40, 129].map((before, i) => ({ ...CASES[1]!, before, seed: 10 + i }));

/** What policies observe, computed on the device: GQA 1/2/4, eviction rounds, a window of 4. */
const OBSERVATIONS: ObservationCase[] = [
  [2, 2, 16],
  [1, 4, 64],
  [3, 1, 128],
].map(([kvHeads, group, headDim], seed) => ({
  kvHeads: kvHeads!,
  group: group!,
  headDim: headDim!,
  pageSize: 16,
  queryWindow: 4,
  steps: [
    { tokens: 150, keep: null },
    { tokens: 30, keep: 0.5 },
    { tokens: 2, keep: null },
  ],
  spread: 2,
  seed,
  gated: seed === 1,
}));

describe.skipIf(skip)('DeviceKVCache in Chromium (WebGPU on SwiftShader)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromiumWithWebGpu();
  });
  afterAll(() => browser?.close());

  it('attends (alone and batched) and observes there within the stated bounds of float64 attention', async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('./browser-entry.ts', import.meta.url))],
      bundle: true,
      format: 'iife',
      globalName: 'kernels',
      platform: 'browser',
      write: false,
    });
    const page = await openSecurePage(browser);
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
    const outcome = await page.evaluate(
      ([cases, batch, observations]) =>
        (globalThis as unknown as { kernels: { runCases: typeof runCases } }).kernels.runCases(
          cases,
          batch,
          observations,
        ),
      [CASES, BATCH, OBSERVATIONS] as const,
    );
    expect(outcome.adapter).toBe('google');
    expect(outcome.results).toHaveLength(CASES.length);
    for (const [i, result] of outcome.results.entries()) {
      expect(result.worst, `case ${i}`).toBeLessThanOrEqual(1);
      expect(result.live, `case ${i}`).toEqual(result.hostLive);
    }
    expect(outcome.batchWorst).toBeLessThanOrEqual(1);
    expect(outcome.observed).toHaveLength(OBSERVATIONS.length);
    for (const [i, result] of outcome.observed.entries()) {
      expect(result.mismatches, `observation ${i}`).toEqual([]);
      expect(result.worst, `observation ${i}`).toBeLessThanOrEqual(1);
    }
  }, 120_000);
});
