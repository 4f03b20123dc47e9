import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTask } from '@lethe/eval';
import { ChatTemplate } from '@lethe/model';
import { launchChromiumWithWebGpu, skipWithoutChromium } from '@lethe/test-utils/chromium';
import type { Browser, Page } from 'playwright-core';
import type { PreviewServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliGeneration, REPO } from './cli-generation';
import {
  drawExample,
  fillLane,
  generate,
  idle,
  openPage,
  readLane,
  servePage,
} from './page-driver';

// The built page (dist/, from `npm run build` of this example) served by Vite's preview server
// and driven in Debian's Chromium: what it generates on the retrieval model equals what
// `lethe generate` gives in Node for the same model, policy, budget and seed. In CI (CI=true)
// the test fails when Chromium is missing; elsewhere it is skipped.
const skip = skipWithoutChromium('[@lethe/example-browser] page test');

/** The retrieval task model's task, and the held-out example the tests generate on. */
const RETRIEVAL = createTask('retrieval', {
  variant: 'niah-single',
  contextChars: 256,
  valueDigits: 2,
});
const EXAMPLE = 3;

describe.skipIf(skip)('the browser example in Chromium', () => {
  let browser: Browser;
  let server: PreviewServer;
  let url: string;
  beforeAll(async () => {
    ({ url, server } = await servePage());
    browser = await launchChromiumWithWebGpu();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A page on `backend` with retrieval's first example prompt, and the errors it logs. */
  async function retrievalPage(
    backend: 'wasm' | 'webgpu',
  ): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await openPage(page, url, backend);
    return { page, errors };
  }

  it('generates on retrieval on wasm as lethe generate does: full cache, H2O and NAMM at 25%', async () => {
    const { page, errors } = await retrievalPage('wasm');
    expect(await page.textContent('#backend-status')).toContain('running on wasm');
    expect(await page.textContent('[data-testid="model-status"]')).toContain(
      'retrieval task model',
    );
    const example = RETRIEVAL.example(0, EXAMPLE);
    const prompt = await drawExample(page, EXAMPLE);
    expect(prompt).toBe(example.prompt);
    const cases = [
      { policy: 'full', budget: 1 },
      { policy: 'h2o', budget: 0.25 },
      { policy: 'namm', budget: 0.25, policyDir: 'models/namm-retrieval' },
    ];
    const verdicts: string[] = [];
    for (const c of cases) {
      await fillLane(page, 0, c);
      await generate(page);
      const shown = await readLane(page, 0);
      expect(shown.error, c.policy).toBe('');
      expect(shown.state, c.policy).toBe('done');
      const node = await cliGeneration({ model: 'models/retrieval', ...c, prompt });
      expect(shown.answer, c.policy).toBe(node.text);
      expect(shown.livePerHead, c.policy).toEqual(node.livePerHead);
      const verdict = RETRIEVAL.verify(example, node.text).correct ? 'correct' : 'wrong';
      expect(shown.verdict, c.policy).toBe(verdict);
      verdicts.push(verdict);
      // the policy's last scores: H2O's and NAMM's rounds score every head's entries
      expect(shown.scores, c.policy).toMatch(
        c.policy === 'full'
          ? /^no scored eviction round/
          : /^L0 \(step \d+\) highest scored — head 0: \d+ /,
      );
      expect(shown.figures['tokens/s'], c.policy).toMatch(/^\d+(\.\d+)? on wasm$/);
      expect(shown.figures.cache, c.policy).toBe('KVCache (host memory)');
    }
    // on this example the full cache and NAMM find the needle and H2O loses it
    expect(verdicts).toEqual(['correct', 'wrong', 'correct']);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('opens a Hugging Face directory from disk and generates on it as lethe generate does', async () => {
    const { page, errors } = await retrievalPage('wasm');
    await page.setInputFiles('#model-folder', join(REPO, 'fixtures/hf/tiny-qwen2'));
    await idle(page);
    expect(await page.textContent('[data-testid="model-status"]')).toMatch(/^model: 2 layers/);
    expect(await page.isHidden('#example')).toBe(true);
    const prompt = 'the cat sat on the mat';
    await page.fill('#prompt', prompt);
    await page.fill('#max-tokens', '24');
    await fillLane(page, 0, { policy: 'h2o', budget: 0.5 });
    await generate(page);
    const shown = await readLane(page, 0);
    expect(shown.error).toBe('');
    const node = await cliGeneration({
      model: 'fixtures/hf/tiny-qwen2',
      policy: 'h2o',
      budget: 0.5,
      prompt,
      tokens: 24,
    });
    expect(shown.answer).toBe(node.text);
    expect(shown.livePerHead).toEqual(node.livePerHead);
    expect(shown.verdict).toBe('none');

    // its chat template: the prompt goes in as a user message, the assistant's turn opened
    await page.check('#chat');
    await fillLane(page, 0, { policy: 'full', budget: 1 });
    await generate(page);
    const chat = await readLane(page, 0);
    expect(chat.error).toBe('');
    const config = JSON.parse(
      await readFile(join(REPO, 'fixtures/hf/tiny-qwen2/tokenizer_config.json'), 'utf8'),
    );
    const rendered = ChatTemplate.fromTokenizerConfig(config).render(
      [{ role: 'user', content: prompt }],
      { addGenerationPrompt: true },
    );
    expect(rendered).toContain(prompt);
    expect(await page.textContent('section.lane[data-lane="0"] [data-testid="fed-prompt"]')).toBe(
      rendered,
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says what is wrong with a bad model or policy folder, and keeps working', async () => {
    const { page, errors } = await retrievalPage('wasm');
    const scratch = await mkdtemp(join(tmpdir(), 'lethe-browser-'));
    try {
      const noConfig = join(scratch, 'no-config');
      await cp(join(REPO, 'fixtures/hf/tiny-qwen2'), noConfig, { recursive: true });
      await rm(join(noConfig, 'config.json'));
      await page.setInputFiles('#model-folder', noConfig);
      await idle(page);
      expect(await page.textContent('#model-error')).toBe(
        '[E_CHECKPOINT] no-config/config.json: is missing',
      );

      const corrupt = join(scratch, 'corrupt');
      await cp(join(REPO, 'fixtures/hf/tiny-qwen2'), corrupt, { recursive: true });
      await writeFile(join(corrupt, 'model.safetensors'), 'not a safetensors file');
      await page.setInputFiles('#model-folder', corrupt);
      await idle(page);
      expect(await page.textContent('#model-error')).toMatch(
        /^\[E_FORMAT\] corrupt\/model\.safetensors: /,
      );

      // the page keeps working: a shipped model loads, and a policy trained on another model
      // is refused on its lane
      await page.selectOption('#model', 'retrieval');
      await idle(page);
      expect(await page.isHidden('#model-error')).toBe(true);
      await fillLane(page, 0, { policy: 'namm', budget: 0.25 });
      await page.setInputFiles('#policy-folder-0', join(REPO, 'models/namm-retrieval-long'));
      await generate(page);
      const refused = await readLane(page, 0);
      expect(refused.state).toBe('failed');
      expect(refused.error).toMatch(
        /^\[E_CHECKPOINT\] namm-retrieval-long\/policy\.json: is a namm policy trained on the model sha256:\w+; http:\/\/127\.0\.0\.1:\d+\/models\/retrieval\/ is sha256:/,
      );

      await page.click('#policy-folder-clear-0');
      await generate(page);
      const shown = await readLane(page, 0);
      expect(shown.error).toBe('');
      expect(shown.state).toBe('done');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('switches to WebGPU (SwiftShader) and compares two policies there as lethe generate does', async () => {
    const { page, errors } = await retrievalPage('wasm');
    await page.selectOption('#backend', 'webgpu');
    await idle(page);
    expect(await page.textContent('#backend-status')).toBe('running on webgpu');
    const prompt = await drawExample(page, EXAMPLE);
    await page.check('#compare');
    const cases = [
      { policy: 'namm', budget: 0.25, policyDir: 'models/namm-retrieval' },
      { policy: 'h2o', budget: 0.25 },
    ];
    for (const [lane, c] of cases.entries()) await fillLane(page, lane, c);
    await generate(page);
    for (const [lane, c] of cases.entries()) {
      const shown = await readLane(page, lane);
      expect(shown.error, c.policy).toBe('');
      expect(shown.figures['tokens/s'], c.policy).toMatch(/ on webgpu$/);
      expect(shown.figures.cache, c.policy).toBe('DeviceKVCache (WebGPU device pages)');
      const node = await cliGeneration({ model: 'models/retrieval', ...c, prompt });
      expect(shown.answer, c.policy).toBe(node.text);
      expect(shown.livePerHead, c.policy).toEqual(node.livePerHead);
      expect(shown.verdict, c.policy).toBe(lane === 0 ? 'correct' : 'wrong');
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('has a label on every control, runs from the keyboard and gives the memory as text', async () => {
    const { page, errors } = await retrievalPage('wasm');
    const unlabelled = await page.evaluate(() =>
      Array.from(document.querySelectorAll('input, select, textarea, button'))
        .filter((control) =>
          control instanceof HTMLButtonElement
            ? (control.textContent ?? '').trim() === ''
            : ((control as HTMLInputElement).labels?.length ?? 0) === 0,
        )
        .map((control) => control.id),
    );
    expect(unlabelled).toEqual([]);
    await page.focus('#policy-0');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('snapkv');
    await page.focus('#compare');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('generate');
    await page.keyboard.press('Enter');
    await page.waitForSelector('section.lane[data-lane="0"][data-state="done"]', {
      timeout: 120_000,
    });
    const shown = await readLane(page, 0);
    expect(shown.error).toBe('');
    expect(await page.textContent('section.lane[data-lane="0"] h3')).toBe('Lane 1: snapkv');
    // the text alternative of the heat map: live entries per layer and KV head, under capacity
    const capacity = Number(
      /^(\d+) entries per KV head/.exec((await page.textContent('.lane .budgets')) ?? '')![1],
    );
    expect(shown.livePerHead.flat().length).toBe(4);
    for (const live of shown.livePerHead.flat()) expect(live).toBeLessThanOrEqual(capacity);
    expect(await page.getAttribute('.lane .heat-map', 'aria-label')).toMatch(
      /^heat map of 4 \(layer, KV head\) rows over \d+ positions; live entries are in the table below$/,
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs the shipped learned policies, Quest and a composition on their models as lethe generate does', async () => {
    const { page, errors } = await retrievalPage('wasm');
    const cases = [
      {
        model: 'retrieval',
        policy: 'gsa',
        budget: 0.5,
        policyDir: 'models/gsa-retrieval',
        policyOptions: '{"sinks":2,"window":8}',
      },
      { model: 'retrieval', policy: 'quest', budget: 0.25 },
      { model: 'lm', policy: 'sol', budget: 0.5, policyDir: 'models/sol-lm' },
      {
        model: 'lm',
        policy: 'h2o+sol-fixed',
        budget: 0.25,
        policyOptions: '{"sol-fixed":{"refresh":false}}',
      },
    ];
    let model = 'retrieval';
    for (const c of cases) {
      if (c.model !== model) {
        await page.selectOption('#model', c.model);
        await idle(page);
        model = c.model;
      }
      const prompt = await drawExample(page, 0);
      await fillLane(page, 0, {
        policy: c.policy,
        budget: c.budget,
        ...(c.policyOptions === undefined ? {} : { options: c.policyOptions }),
      });
      await generate(page);
      const shown = await readLane(page, 0);
      expect(shown.error, c.policy).toBe('');
      const node = await cliGeneration({ ...c, model: `models/${c.model}`, prompt });
      expect(shown.answer, c.policy).toBe(node.text);
      expect(shown.livePerHead, c.policy).toEqual(node.livePerHead);
    }

    // NGC brings its own model (its policy directory's: "model": ".") and runs under a ceiling
    await page.selectOption('#model', 'countdown');
    await idle(page);
    await drawExample(page, 0);
    await fillLane(page, 0, { policy: 'ngc', budget: 0.5 });
    await generate(page);
    const ngc = await readLane(page, 0);
    expect(ngc.error).toBe('');
    expect(ngc.state).toBe('done');
    expect(ngc.verdict).toMatch(/^(correct|wrong)$/);
    expect(await page.textContent('section.lane[data-lane="0"] .budgets')).toMatch(
      /^\d+ entries per KV head \(full-cache length \d+\)$/,
    );
    expect(errors).toEqual([]);
    await page.close();
  });
});
