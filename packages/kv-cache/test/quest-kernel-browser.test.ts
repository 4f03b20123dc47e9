import { fileURLToPath } from 'node:url';
import { launchChromium, skipWithoutChromium } from '@lethe/test-utils/chromium';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeQuestCase, type QuestCase, runQuestCase } from './quest-cases';

// The kernel as a browser runs it: the package's Quest code bundled for the browser and run in
// Debian's Chromium (which CI installs), its results equal to Node's bit for bit. In CI
// (CI=true) the test fails when Chromium is missing; elsewhere it is skipped, saying why.
const skip = skipWithoutChromium('[@lethe/kv-cache] browser kernel test');

/** The bundle's global in the page. */
interface PageQuest {
  runQuestCase: typeof runQuestCase;
  kernelRuns: () => boolean;
}

describe.skipIf(skip)('Quest bound kernel in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  it('loads there and scores and chooses pages exactly as in Node (SIMD and portable forms)', async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('./quest-cases.ts', import.meta.url))],
      bundle: true,
      format: 'iife',
      globalName: 'quest',
      platform: 'browser',
      write: false,
    });
    // head dims 16 and 64 run the kernel, 6 the portable form
    const cases = [
      makeQuestCase(515, 16, 2, 1),
      makeQuestCase(37, 64, 4, 2),
      makeQuestCase(130, 6, 2, 3),
      makeQuestCase(3, 16, 1, 4),
    ];
    const page = await browser.newPage();
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
    const inBrowser = await page.evaluate((cases: QuestCase[]) => {
      const quest = (globalThis as unknown as { quest: PageQuest }).quest;
      return { kernel: quest.kernelRuns(), results: cases.map((c) => quest.runQuestCase(c)) };
    }, cases);
    expect(inBrowser.kernel).toBe(true);
    expect(inBrowser.results).toEqual(cases.map(runQuestCase));
    await page.close();
  });
});
