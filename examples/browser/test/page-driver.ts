import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { type PreviewServer, preview } from 'vite';

/** The example's folder (its built page is in `dist/`). */
export const EXAMPLE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Serves the built page (`dist/`) with Vite's preview server on a free loopback port. */
export async function servePage(): Promise<{
  readonly url: string;
  readonly server: PreviewServer;
}> {
  const server = await preview({
    root: EXAMPLE_DIR,
    logLevel: 'silent',
    preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false },
  });
  const address = server.httpServer.address();
  if (address === null || typeof address === 'string')
    throw new Error('preview server has no port');
  return { url: `http://127.0.0.1:${address.port}/`, server };
}

/** Waits until the page is idle: no load or generation running. */
export async function idle(page: Page, timeout = 240_000): Promise<void> {
  await page.waitForSelector('body[data-busy="false"]', { timeout });
}

/** Opens the page on `backend` and waits for the first shipped model and its example prompt. */
export async function openPage(page: Page, url: string, backend: 'wasm' | 'webgpu'): Promise<void> {
  await page.goto(`${url}?backend=${backend}`);
  await idle(page);
  await page.waitForFunction(
    () => (document.getElementById('prompt') as HTMLTextAreaElement).value !== '',
  );
}

/**
 * Draws held-out examples (documents, for the LM) until the prompt is example `index` of the
 * loaded task (seed 0).
 */
export async function drawExample(page: Page, index: number): Promise<string> {
  for (;;) {
    const status = (await page.textContent('#example-status')) ?? '';
    const shown = /(?:example|document) (\d+)/.exec(status);
    if (shown !== null && Number(shown[1]) === index) return page.inputValue('#prompt');
    if (shown !== null && Number(shown[1]) > index) throw new Error(`example ${index} has passed`);
    await page.click('#example');
    await page.waitForFunction(
      (before) => document.getElementById('example-status')?.textContent !== before,
      status,
    );
  }
}

/** A lane's request as the form takes it. */
export interface LaneInput {
  readonly policy: string;
  readonly budget: number;
  /** Options JSON; undefined keeps what the form filled in. */
  readonly options?: string;
}

/** What a lane showed once done. */
export interface LaneOutput {
  readonly state: string;
  readonly answer: string;
  readonly error: string;
  /** `[layer][head]` live entries, from the lane's table. */
  readonly livePerHead: number[][];
  /** Figures by their term (`tokens/s`, `verdict`, …). */
  readonly figures: Record<string, string>;
  readonly verdict: string;
  /** The text alternative of the policy's last scores. */
  readonly scores: string;
}

/** Fills lane `lane`'s form. */
export async function fillLane(page: Page, lane: number, input: LaneInput): Promise<void> {
  await page.fill(`#policy-${lane}`, input.policy);
  await page.dispatchEvent(`#policy-${lane}`, 'change');
  if (input.policy !== 'full') await page.fill(`#budget-${lane}`, String(input.budget));
  if (input.options !== undefined) await page.fill(`#options-${lane}`, input.options);
}

/** Clicks Generate and waits for every shown lane to finish. */
export async function generate(page: Page): Promise<void> {
  await page.click('#generate');
  await page.waitForSelector('body[data-busy="true"]', { state: 'attached' }).catch(() => {});
  await idle(page);
}

/** What lane `lane` shows. */
export function readLane(page: Page, lane: number): Promise<LaneOutput> {
  return page.evaluate((index) => {
    const root = document.querySelector(`section.lane[data-lane="${index}"]`) as HTMLElement;
    const cells = Array.from(root.querySelectorAll<HTMLElement>('td[data-head]'));
    const livePerHead: number[][] = [];
    for (const cell of cells) {
      const layer = Number(cell.dataset.layer);
      livePerHead[layer] = livePerHead[layer] ?? [];
      livePerHead[layer][Number(cell.dataset.head)] = Number(cell.textContent);
    }
    const figures: Record<string, string> = {};
    for (const dd of Array.from(root.querySelectorAll<HTMLElement>('dd[data-figure]'))) {
      figures[dd.dataset.figure!] = dd.textContent ?? '';
    }
    const error = root.querySelector('.error') as HTMLElement;
    return {
      state: root.dataset.state ?? '',
      answer: root.querySelector('[data-testid="answer"]')?.textContent ?? '',
      error: error.hidden ? '' : (error.textContent ?? ''),
      livePerHead,
      figures,
      verdict: root.dataset.verdict ?? '',
      scores: root.querySelector('[data-testid="scores-note"]')?.textContent ?? '',
    };
  }, lane);
}
