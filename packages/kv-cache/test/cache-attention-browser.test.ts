import { fileURLToPath } from 'node:url';
import { launchChromium, skipWithoutChromium } from '@lethe/test-utils/chromium';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttentionCase, runAttentionCase } from './attention-cases';

// The decode attention kernel as a browser runs it: the package's code bundled for the browser
// and run in Debian's Chromium (which CI installs), its results equal to Node's bit for bit. In
// CI (CI=true) the test fails when Chromium is missing; elsewhere it is skipped, saying why.
const skip = skipWithoutChromium('[@lethe/kv-cache] browser attention kernel test');

/** The bundle's global in the page. */
interface PageAttention {
  runAttentionCase: typeof runAttentionCase;
  kernelRuns: () => boolean;
}

const base = {
  kvHeads: 2,
  pageSize: 16,
  sparse: false,
  biased: false,
  spread: 1,
} as const;

describe.skipIf(skip)('decode attention kernel in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  it('loads there and attends exactly as in Node (SIMD and portable forms)', async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('./attention-cases.ts', import.meta.url))],
      bundle: true,
      format: 'iife',
      globalName: 'attention',
      platform: 'browser',
      write: false,
    });
    // head dims 16, 64 and 128 run the kernel, 6 the portable form
    const cases: AttentionCase[] = [
      {
        ...base,
        group: 2,
        headDim: 16,
        tokens: 515,
        kept: [515, 300],
        gated: false,
        chunkTokens: 1,
        seed: 1,
      },
      {
        ...base,
        group: 4,
        headDim: 64,
        tokens: 70,
        kept: [33, 70],
        gated: true,
        chunkTokens: 5,
        seed: 2,
      },
      {
        ...base,
        group: 1,
        headDim: 128,
        tokens: 40,
        kept: [40, 9],
        gated: false,
        chunkTokens: 0,
        seed: 3,
      },
      {
        ...base,
        group: 2,
        headDim: 6,
        tokens: 130,
        kept: [100, 130],
        gated: true,
        chunkTokens: 3,
        seed: 4,
      },
      {
        ...base,
        group: 2,
        headDim: 32,
        tokens: 200,
        kept: [150, 200],
        gated: false,
        sparse: true,
        biased: true,
        chunkTokens: 1,
        seed: 5,
      },
    ];
    const page = await browser.newPage();
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
    const inBrowser = await page.evaluate((cases: AttentionCase[]) => {
      const attention = (globalThis as unknown as { attention: PageAttention }).attention;
      return {
        kernel: attention.kernelRuns(),
        results: cases.map((c) => attention.runAttentionCase(c)),
      };
    }, cases);
    expect(inBrowser.kernel).toBe(true);
    expect(inBrowser.results).toEqual(cases.map(runAttentionCase));
    await page.close();
  });
});
