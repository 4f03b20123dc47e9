import type { LetheError } from '@lethe/core';
import {
  type AnyPolicyProvider,
  type ComputePolicy,
  fullCacheProvider,
  isComputeBudget,
  PolicyRegistry,
} from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import { generate } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { H2OPolicy, QuestSelector } from '@lethe/policies-heuristic';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CellEnvironment,
  capacityFor,
  FullCacheReferences,
  fullCacheLength,
  logProbability,
  rollout,
  runCell,
  teacherForce,
  validateSweepConfig,
} from '../../src/harness/index';
import { steppingClock, tinyModel, toyLmTask, toyTask, toyTokenizer } from './toy';

let model: DecoderModel;

beforeAll(async () => {
  await initBackend('wasm');
  model = tinyModel(1);
});

afterAll(() => {
  model.dispose();
});

const encode = (text: string) => toyTokenizer.encode(text, { addBos: true });
/** Entries one token adds: 2 layers × 1 KV head. */
const PER_TOKEN = 2;

function generationEnv(overrides: Partial<CellEnvironment> = {}): CellEnvironment {
  const config = validateSweepConfig({
    tasks: ['toy'],
    policies: ['full', 'streaming-llm', 'h2o'],
    budgets: [0.25],
    seeds: [0],
    examplesPerCell: 3,
    samplesPerExample: 2,
    batchSize: 4,
  });
  return {
    task: toyTask({ stopText: '....' }),
    model,
    config,
    registry: createDefaultRegistry(),
    clock: steppingClock(),
    references: new FullCacheReferences(),
    ...overrides,
  };
}

describe('rollout', () => {
  it('generates exactly what generate() does, and traces every read', async () => {
    const prompts = [encode('abca'), encode('bcdefgh'), encode('hh')];
    const policy = () =>
      new H2OPolicy({ budget: { keepCount: 5 }, trigger: { whenLiveExceeds: 5, slack: 1 } });
    const stop = { stopSequences: [toyTokenizer.encode('a')] };
    const streamIds = [4, 9, 2];
    const sampling = { temperature: 1 };
    const expected = await generate({
      model,
      prompts,
      maxNewTokens: 20,
      eviction: policy(),
      sampling,
      seed: 5,
      streamIds,
      stop,
    });
    const got = await rollout({
      model,
      prompts,
      streamIds,
      maxNewTokens: 20,
      sampling,
      seed: 5,
      stop,
      policies: { eviction: policy() },
      clock: steppingClock(),
    });
    expect(got.generatedTokens).toBe(expected.stats.generatedTokens);
    got.sequences.forEach((sequence, b) => {
      expect(Array.from(sequence.tokens)).toEqual(Array.from(expected.tokens[b]!));
      expect(sequence.finishReason).toBe(expected.finishReasons[b]);
      expect(sequence.peakTotal).toBe(expected.stats.caches[b]!.peakTotal);
      const P = prompts[b]!.length;
      expect(sequence.read).toHaveLength(sequence.tokens.length);
      expect(sequence.read[0]).toBe(P * PER_TOKEN);
      sequence.available.forEach((available, k) => {
        expect(available).toBe((P + k) * PER_TOKEN);
        expect(sequence.read[k]!).toBeLessThanOrEqual(available);
        expect(sequence.read[k]!).toBeLessThanOrEqual((5 + 1 + 1) * PER_TOKEN + P * PER_TOKEN);
      });
    });
    expect(new Set(got.sequences.map((s) => s.finishReason))).toContain('stop-sequence');
  });
});

describe('rollout with a read selector', () => {
  it('traces what each decode step read as generate() counts it: Quest reads its pages only', async () => {
    const prompts = [encode('abcabcabca'), encode('bcdefgh')];
    const quest = () =>
      new QuestSelector({ tokenBudget: 4, pageSize: 2, minPages: 1, denseLayers: 0 });
    const shared = {
      model,
      prompts,
      streamIds: [0, 1],
      maxNewTokens: 20,
      sampling: { temperature: 0 },
      seed: 5,
      stop: {},
    };
    const expected = await generate({ ...shared, readSelector: quest() });
    const got = await rollout({
      ...shared,
      policies: { readSelector: quest() },
      clock: steppingClock(),
    });
    got.sequences.forEach((sequence, b) => {
      expect(Array.from(sequence.tokens)).toEqual(Array.from(expected.tokens[b]!));
      const P = prompts[b]!.length;
      // nothing is evicted: the peak is the full cache's
      expect(sequence.peakTotal).toBe((P + sequence.tokens.length - 1) * PER_TOKEN);
      expect(sequence.read[0]).toBe(P * PER_TOKEN);
      // it held every entry: the live counts are the full cache's, the reads are fewer
      expect(sequence.live).toEqual(sequence.available);
      const decode = sequence.read.slice(1).map((read) => read - PER_TOKEN);
      expect(decode).toHaveLength(sequence.tokens.length - 1);
      expect(decode.reduce((a, r) => a + r, 0)).toBe(expected.stats.reads[b]!.entries);
      decode.forEach((read, k) => {
        // per head and layer ⌊4 / 2⌋ pages of 2: an older one, full, and the newest, which holds
        // 1 or 2 of the P + k entries the step finds (every one of them while they fit 2 pages)
        const live = P + k;
        const pages = Math.ceil(live / 2);
        expect(read).toBe((pages <= 2 ? live : 2 + live - 2 * (pages - 1)) * PER_TOKEN);
        expect(read + PER_TOKEN).toBeLessThanOrEqual(sequence.available[k + 1]!);
      });
    });
  });
});

describe('rollout with a chunked prefill', () => {
  it('traces the last prompt token reading the cache left before its chunk, and bounds the peak', async () => {
    const prompts = [encode('abcabcabcabcab'), encode('bcdefgh'), encode('hhabchhabchh')];
    const keepCount = 4;
    const chunk = 3;
    const run = (prefillChunk?: number) =>
      rollout({
        model,
        prompts,
        streamIds: [0, 1, 2],
        maxNewTokens: 6,
        sampling: { temperature: 0 },
        seed: 1,
        stop: {},
        policies: {
          eviction: new H2OPolicy({
            budget: { keepCount },
            trigger: { whenLiveExceeds: keepCount, slack: 0 },
          }),
        },
        ...(prefillChunk === undefined ? {} : { prefillChunk }),
        clock: steppingClock(),
      });
    const whole = await run();
    const chunked = await run(chunk);
    chunked.sequences.forEach((sequence, b) => {
      const P = prompts[b]!.length;
      expect(whole.sequences[b]!.peakTotal).toBe(P * PER_TOKEN);
      expect(sequence.peakTotal).toBeLessThanOrEqual((keepCount + chunk) * PER_TOKEN);
      // The last chunk starts at a multiple of 3 and finds the cache trimmed to the keep count.
      const lastChunk = P - Math.floor((P - 1) / chunk) * chunk;
      const before = P > chunk ? keepCount * PER_TOKEN : 0;
      expect(sequence.read[0]).toBe(before + lastChunk * PER_TOKEN);
      expect(sequence.available[0]).toBe(P * PER_TOKEN);
    });
  });
});

describe('runCell on a generation task', () => {
  it('gives consistent metrics for the full cache and evicting policies, without leaks', async () => {
    const env = generationEnv();
    const before = tf.memory().numTensors;
    const full = await runCell({ task: 'toy', policy: 'full', budget: 1, seed: 0 }, env);
    const streaming = await runCell(
      { task: 'toy', policy: 'streaming-llm', budget: 0.25, seed: 0 },
      env,
    );
    const h2o = await runCell({ task: 'toy', policy: 'h2o', budget: 0.25, seed: 0 }, env);
    expect(tf.memory().numTensors).toBe(before);

    for (const cell of [full, streaming, h2o]) {
      const m = cell.metrics;
      expect(m.accuracy!.n).toBe(3);
      expect(m.accuracy!.mean).toBeGreaterThanOrEqual(0);
      expect(m.accuracy!.mean).toBeLessThanOrEqual(1);
      expect(Object.keys(m.passAtK!)).toEqual(['1', '2']);
      expect(m.passAtK!['1']).toBeCloseTo(m.accuracy!.mean, 12);
      expect(m.passAtK!['2']).toBeGreaterThanOrEqual(m.passAtK!['1']!);
      expect(m.passAtK!['2']).toBeLessThanOrEqual(1);
      expect(m.meanLive.n).toBe(6);
      expect(m.tokensPerSecond.mean).toBeGreaterThan(0);
      expect(m.perplexity).toBeUndefined();
      expect(cell.command).toContain(`--policy ${cell.key.policy} --budget ${cell.key.budget}`);
      // K and V of head_dim float32s per entry, at each sequence's own peak
      const peaks = cell.sequences!.map((s) => s.peakTotal);
      const bytes = peaks.map((peak) => peak * 2 * model.config.head_dim * 4);
      expect(m.peakKvBytes!.mean).toBeCloseTo(bytes.reduce((a, b) => a + b) / bytes.length, 9);
      expect(m.peakKvBytes!.n).toBe(6);
    }
    expect(full.metrics.peakKvReduction).toEqual({ mean: 1, stderr: 0, n: 6 });
    expect(full.metrics.realisedBudget!.mean).toBe(1);
    expect(full.metrics.netKeepRate!.mean).toBe(1);

    // Exact expectation: with the toy task every sequence runs to maxNewTokens (the stop text
    // never appears), so the full cache peaks at P = L − 1 entries per head, the capacity is the
    // ceiling ⌈0.25 · P⌉ and the policies, evicting down to capacity − 1 as soon as a head
    // reaches it (the default `slackFraction` 0), peak exactly at the capacity.
    const task = toyTask();
    const bounds = [0, 1, 2].map((i) => {
      const P = fullCacheLength(encode(task.example(0, i).prompt).length, task.maxNewTokens) - 1;
      return capacityFor(0.25, P) / P;
    });
    const expectedRealised = (bounds[0]! + bounds[1]! + bounds[2]!) / 3;
    for (const cell of [streaming, h2o]) {
      const m = cell.metrics;
      expect(m.realisedBudget!.mean).toBeCloseTo(expectedRealised, 12);
      expect(m.realisedBudget!.mean).toBeLessThan(0.25 + 1 / 27);
      // NGC eq. 7 is a mean of ratios full/peak: at least 1 / mean realised budget (Jensen).
      expect(m.peakKvReduction!.mean).toBeGreaterThanOrEqual(1 / m.realisedBudget!.mean - 1e-12);
      expect(m.peakKvReduction!.mean).toBeGreaterThan(2);
      expect(m.netKeepRate!.mean).toBeLessThan(1);
      expect(m.netKeepRate!.mean).toBeGreaterThan(0);
      expect(m.meanLive.mean).toBeLessThan(full.metrics.meanLive.mean);
      expect(m.peakLive.mean).toBeLessThan(full.metrics.peakLive.mean);
    }
  });

  it('runs a rate schedule as generate() with the policy built for it, recording each sequence', async () => {
    const config = validateSweepConfig({
      tasks: ['toy'],
      policies: ['full', 'h2o'],
      budgets: [0.5],
      rateEvery: 4,
      seeds: [0],
      examplesPerCell: 3,
      batchSize: 4,
    });
    const task = toyTask({ stopText: '....' });
    const env = generationEnv({ config, task });
    const h2o = await runCell({ task: 'toy', policy: 'h2o', budget: 0.5, seed: 0 }, env);
    expect(h2o.command).toContain('--budget 0.5 --rate-every 4 ');
    const prompts = [0, 1, 2].map((i) => encode(task.example(0, i).prompt));
    const direct = await generate({
      model,
      prompts,
      streamIds: [0, 1, 2],
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0 },
      seed: 0,
      stop: { eosTokenIds: [], stopSequences: [encode('....').subarray(1)] },
      eviction: new H2OPolicy({ budget: { keepRatio: 0.5 }, trigger: { every: 4 } }),
    });
    expect(h2o.sequences).toEqual(
      direct.tokens.map((tokens, i) => ({
        example: i,
        correct: task.verify(task.example(0, i), toyTokenizer.decode(tokens)).correct,
        peakTotal: direct.stats.caches[i]!.peakTotal,
        generated: tokens.length,
      })),
    );
    const solved = h2o.sequences!.filter((s) => s.correct).length;
    expect(h2o.metrics.accuracy!.mean).toBeCloseTo(solved / 3, 12);
    // A round every 4 tokens keeping half: far below the full cache, whatever the length.
    expect(h2o.metrics.realisedBudget!.mean).toBeLessThan(0.5);
  });

  it('runs a read selector with ⌈b · P⌉ reads per step for each sequence: the whole cache held, a read share below 1', async () => {
    const options = { pageSize: 2, minPages: 1, denseLayers: 0 };
    const config = validateSweepConfig({
      tasks: ['toy'],
      policies: ['full', { name: 'quest', options }],
      budgets: [0.25],
      seeds: [0],
      examplesPerCell: 4,
      batchSize: 4,
    });
    const task = toyTask({ stopText: '....' });
    const env = generationEnv({ config, task });
    const before = tf.memory().numTensors;
    const full = await runCell({ task: 'toy', policy: 'full', budget: 1, seed: 0 }, env);
    const quest = await runCell({ task: 'toy', policy: 'quest', budget: 0.25, seed: 0 }, env);
    expect(tf.memory().numTensors).toBe(before);
    expect(quest.command).toContain(
      `--policy quest --policy-options '${JSON.stringify(options)}' --budget 0.25`,
    );
    // Each sequence alone, as generate() runs it with the read budget of its own full peak P
    // (examples of 4 and 5 letters: several budgets, so the cell batches them apart).
    const budgets = full.sequences!.map((s) => capacityFor(0.25, s.peakTotal / PER_TOKEN));
    expect(new Set(budgets).size).toBeGreaterThan(1);
    const direct = [];
    for (const [i, tokenBudget] of budgets.entries()) {
      // the share of the full cache's reads each predicted token performed: the prompt's last
      // token all of it, each decode step what generate() counted it read plus its own token
      const shares = [1];
      let counted = 0;
      let available = 0;
      const settle = (entries: number) => {
        if (available > 0) shares.push((entries - counted + PER_TOKEN) / available);
      };
      const run = await generate({
        model,
        prompts: [encode(task.example(0, i).prompt)],
        streamIds: [i],
        maxNewTokens: task.maxNewTokens,
        sampling: { temperature: 0 },
        seed: 0,
        stop: { eosTokenIds: [], stopSequences: [encode('....').subarray(1)] },
        readSelector: new QuestSelector({ tokenBudget, ...options }),
        onStep: ({ caches, reads }) => {
          settle(reads[0]!.entries);
          counted = reads[0]!.entries;
          available = (caches[0]!.length(0) + 1) * PER_TOKEN;
        },
      });
      settle(run.stats.reads[0]!.entries);
      direct.push({ run, share: shares.reduce((a, b) => a + b, 0) / shares.length });
    }
    expect(quest.sequences).toEqual(
      direct.map(({ run }, i) => ({
        example: i,
        correct: task.verify(task.example(0, i), toyTokenizer.decode(run.tokens[0]!)).correct,
        peakTotal: run.stats.caches[0]!.peakTotal,
        generated: run.tokens[0]!.length,
      })),
    );
    const m = quest.metrics;
    // it keeps every entry: the full cache's peak, whatever the budget
    expect(quest.sequences!.map((s) => s.peakTotal)).toEqual(
      full.sequences!.map((s) => s.peakTotal),
    );
    expect(m.realisedBudget).toEqual({ mean: 1, stderr: 0, n: 4 });
    expect(m.peakKvReduction).toEqual({ mean: 1, stderr: 0, n: 4 });
    // and reads a share of it: the decode steps' reads as the runtime counted them, each
    // sequence under the read budget of its own peak
    const share = direct.reduce((sum, d) => sum + d.share, 0) / direct.length;
    expect(m.netKeepRate!.mean).toBeCloseTo(share, 12);
    expect(m.netKeepRate!.mean).toBeLessThan(0.75);
    // every sequence runs to maxNewTokens (the stop text never appears): the live entries are the
    // full cache's, token for token
    expect(quest.sequences!.map((s) => s.generated)).toEqual(
      full.sequences!.map((s) => s.generated),
    );
    expect(m.meanLive).toEqual(full.metrics.meanLive);
  });

  it('rewrites the prompts of a policy that conditions them, and refuses text it cannot encode', async () => {
    const conditioned = (suffix: string): AnyPolicyProvider => ({
      name: 'suffixed',
      summary: 'H2O, told its budget in the prompt',
      options: fullCacheProvider.options,
      build: () => ({
        eviction: new H2OPolicy({ budget: { keepRatio: 0.5 }, trigger: { every: 4 } }),
        prompt: { text: (prompt) => `${prompt}${suffix}` },
      }),
    });
    const config = validateSweepConfig({
      tasks: ['toy'],
      policies: ['full', 'suffixed'],
      budgets: [0.5],
      rateEvery: 4,
      seeds: [0],
      examplesPerCell: 2,
    });
    const task = toyTask({ stopText: '....' });
    const env = (suffix: string) =>
      generationEnv({
        config,
        task,
        registry: new PolicyRegistry([fullCacheProvider, conditioned(suffix)]),
      });
    const cell = await runCell(
      { task: 'toy', policy: 'suffixed', budget: 0.5, seed: 0 },
      env('hg'),
    );
    const direct = await generate({
      model,
      prompts: [0, 1].map((i) => encode(`${task.example(0, i).prompt}hg`)),
      streamIds: [0, 1],
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0 },
      seed: 0,
      stop: { eosTokenIds: [], stopSequences: [encode('....').subarray(1)] },
      eviction: new H2OPolicy({ budget: { keepRatio: 0.5 }, trigger: { every: 4 } }),
    });
    expect(cell.sequences!.map((s) => s.peakTotal)).toEqual(
      direct.stats.caches.map((c) => c.peakTotal),
    );
    expect(cell.sequences!.map((s) => s.generated)).toEqual(direct.tokens.map((t) => t.length));
    await expectLetheRejection(
      runCell({ task: 'toy', policy: 'suffixed', budget: 0.5, seed: 0 }, env('<%>')),
      'E_ARG',
      'policy.prompt',
    );
  });

  it('reuses the full-cache reference runs per (task, seed)', async () => {
    const references = new FullCacheReferences();
    let runs = 0;
    const counting = {
      get: (task: string, seed: number, compute: () => Promise<never>) =>
        references.get(task, seed, () => {
          runs += 1;
          return compute();
        }),
      clear: () => references.clear(),
    } as unknown as FullCacheReferences;
    const env = generationEnv({ references: counting });
    const h2o = await runCell({ task: 'toy', policy: 'h2o', budget: 0.25, seed: 0 }, env);
    const full = await runCell({ task: 'toy', policy: 'full', budget: 1, seed: 0 }, env);
    await runCell({ task: 'toy', policy: 'streaming-llm', budget: 0.25, seed: 0 }, env);
    expect(runs).toBe(1);
    // Same results whether the reference was computed first or for an earlier cell.
    const alone = await runCell(
      { task: 'toy', policy: 'full', budget: 1, seed: 0 },
      generationEnv(),
    );
    expect(alone).toEqual(full);
    const h2oAlone = await runCell(
      { task: 'toy', policy: 'h2o', budget: 0.25, seed: 0 },
      generationEnv(),
    );
    expect(h2oAlone).toEqual(h2o);
  });

  it('rejects mismatched keys, unknown policies and too small vocabularies', async () => {
    const env = generationEnv();
    const reasons = async (run: Promise<unknown>) => {
      const error = (await run.then(
        () => undefined,
        (e: unknown) => e,
      )) as LetheError;
      return [error.code, error.argument];
    };
    expect(await reasons(runCell({ task: 'lm', policy: 'full', budget: 1, seed: 0 }, env))).toEqual(
      ['E_ARG', 'key.task'],
    );
    expect(
      await reasons(runCell({ task: 'toy', policy: 'full', budget: 0.5, seed: 0 }, env)),
    ).toEqual(['E_BUDGET', 'budget']);
    expect(
      await reasons(runCell({ task: 'toy', policy: 'h2x', budget: 0.5, seed: 0 }, env)),
    ).toEqual(['E_ARG', 'key.policy']);
    // A sweep policy the registry does not hold is refused when its cell prepares it.
    const unregistered = generationEnv({
      config: validateSweepConfig({ ...env.config, policies: ['full', 'h2x'] }),
    });
    expect(
      await reasons(runCell({ task: 'toy', policy: 'h2x', budget: 0.5, seed: 0 }, unregistered)),
    ).toEqual(['E_ARG', 'policy']);
    const small = tinyModel(2);
    const wrongVocab = {
      ...small,
      config: { ...small.config, vocab_size: 5 },
    } as unknown as DecoderModel;
    expect(
      await reasons(
        runCell({ task: 'toy', policy: 'full', budget: 1, seed: 0 }, { ...env, model: wrongVocab }),
      ),
    ).toEqual(['E_ARG', 'model']);
    small.dispose();
  });
});

describe('teacher-forced perplexity', () => {
  it('sums the same NLL as the parallel forward with the full cache', async () => {
    const doc = encode('abcdefgabcdhhhgfe');
    const [scored] = (
      await teacherForce({
        model,
        documents: [doc],
        streamIds: [0],
        seed: 0,
        policies: {},
        clock: steppingClock(),
      })
    ).documents;
    const V = model.config.vocab_size;
    const logits = tf.tidy(
      () =>
        model
          .forward(tf.tensor2d([Array.from(doc)], [1, doc.length], 'int32'))
          .logits.dataSync() as Float32Array,
    );
    let nll = 0;
    for (let t = 0; t + 1 < doc.length; t++) {
      nll -= logProbability(logits.subarray(t * V, (t + 1) * V), doc[t + 1]!);
    }
    expect(scored!.predicted).toBe(doc.length - 1);
    expect(scored!.sumNll).toBeCloseTo(nll, 3);
    expect(scored!.peakTotal).toBe((doc.length - 1) * PER_TOKEN);
    // A dense prefill of 5 tokens scores tokens 5 … n − 1 only.
    const [after] = (
      await teacherForce({
        model,
        documents: [doc],
        streamIds: [0],
        seed: 0,
        policies: {},
        clock: steppingClock(),
        prefill: 5,
      })
    ).documents;
    let tail = 0;
    for (let t = 4; t + 1 < doc.length; t++) {
      tail -= logProbability(logits.subarray(t * V, (t + 1) * V), doc[t + 1]!);
    }
    expect(after!.predicted).toBe(doc.length - 5);
    expect(after!.sumNll).toBeCloseTo(tail, 3);
    for (const prefill of [0, 1.5, doc.length]) {
      await expectLetheRejection(
        teacherForce({
          model,
          documents: [doc],
          streamIds: [0],
          seed: 0,
          policies: {},
          clock: steppingClock(),
          prefill,
        }),
        'E_ARG',
        prefill === doc.length ? 'documents[0]' : 'prefill',
      );
    }
  });

  it('gives perplexity and keep-rate metrics under eviction', async () => {
    const config = validateSweepConfig({
      tasks: ['toy-lm'],
      policies: ['full', 'streaming-llm'],
      budgets: [0.5],
      seeds: [2],
      examplesPerCell: 4,
      batchSize: 3,
    });
    const env: CellEnvironment = {
      task: toyLmTask(),
      model,
      config,
      registry: createDefaultRegistry(),
      clock: steppingClock(),
    };
    const before = tf.memory().numTensors;
    const full = await runCell({ task: 'toy-lm', policy: 'full', budget: 1, seed: 2 }, env);
    const evict = await runCell(
      { task: 'toy-lm', policy: 'streaming-llm', budget: 0.5, seed: 2 },
      env,
    );
    expect(tf.memory().numTensors).toBe(before);
    for (const cell of [full, evict]) {
      const m = cell.metrics;
      expect(m.perplexity!.n).toBe(4);
      expect(m.perplexity!.mean).toBeGreaterThan(1);
      expect(m.perplexity!.mean).toBeLessThan(toyTokenizer.vocabSize * 2);
      expect(m.accuracy).toBeUndefined();
      expect(m.passAtK).toBeUndefined();
    }
    for (const cell of [full, evict]) {
      // every document's outcome, for paired comparisons: they give the cell's perplexity
      expect(cell.documents!.map((d) => d.example)).toEqual([0, 1, 2, 3]);
      const perDocument = cell.documents!.map((d) => Math.exp(d.sumNll / d.predicted));
      const mean = perDocument.reduce((sum, x) => sum + x, 0) / perDocument.length;
      expect(mean).toBeCloseTo(cell.metrics.perplexity!.mean, 10);
      expect(cell.sequences).toBeUndefined();
    }
    expect(full.documents!.map((d) => d.predicted)).toEqual(
      evict.documents!.map((d) => d.predicted),
    );
    expect(full.metrics.peakKvReduction).toEqual({ mean: 1, stderr: 0, n: 4 });
    expect(full.metrics.netKeepRate!.mean).toBe(1);
    expect(evict.metrics.peakKvReduction!.mean).toBeGreaterThan(1.4);
    expect(full.metrics.peakKvBytes!.mean).toBeCloseTo(
      full.metrics.peakLive.mean * 2 * model.config.head_dim * 4,
      9,
    );
    expect(evict.metrics.peakKvBytes!.mean).toBeLessThan(full.metrics.peakKvBytes!.mean);
    expect(evict.metrics.netKeepRate!.mean).toBeLessThan(1);
    expect(evict.metrics.perplexity!.mean).not.toBe(full.metrics.perplexity!.mean);
  });

  it('runs a compute policy for the budget as its targets, with SOL’s net keep-rate over its knobs', async () => {
    const asked: unknown[] = [];
    /** Reads κ = the token target, and prunes MLP inputs by half without declaring that knob. */
    const fixedCompute: AnyPolicyProvider = {
      name: 'fixed-compute',
      summary: 'a fixed κ',
      options: fullCacheProvider.options,
      budgetForms: ['compute'],
      build: ({ budget }) => {
        asked.push(budget);
        if (!isComputeBudget(budget)) throw new Error('not a compute budget');
        const controls = { tokenKeep: budget.targets.tokenKeep, mlpInputKeep: 0.5 };
        const policy: ComputePolicy = {
          name: 'fixed-compute',
          axes: { tokenKeep: true, mlpInputKeep: false, activationBits: false },
          controls: (observation) => Array.from(observation.livePerLayer, () => controls),
        };
        return { compute: policy };
      },
    };
    const config = validateSweepConfig({
      tasks: ['toy-lm'],
      policies: ['full', 'fixed-compute'],
      budgets: [0.25],
      seeds: [2],
      examplesPerCell: 4,
      batchSize: 4,
    });
    const env: CellEnvironment = {
      task: toyLmTask(),
      model,
      config,
      registry: new PolicyRegistry([fullCacheProvider, fixedCompute]),
      clock: steppingClock(),
    };
    const before = tf.memory().numTensors;
    const full = await runCell({ task: 'toy-lm', policy: 'full', budget: 1, seed: 2 }, env);
    const cell = await runCell(
      { task: 'toy-lm', policy: 'fixed-compute', budget: 0.25, seed: 2 },
      env,
    );
    expect(tf.memory().numTensors).toBe(before);
    expect(asked[0]).toEqual({ targets: { tokenKeep: 0.25, mlpInputKeep: 0.25, precision: 0.25 } });
    const m = cell.metrics;
    // Every decode step read κ = 0.25; the undeclared MLP pruning does not count.
    expect(m.netKeepRate!.mean).toBeCloseTo(0.25, 12);
    expect(m.peakKvReduction).toEqual({ mean: 1, stderr: 0, n: 4 });
    expect(m.perplexity!.mean).not.toBe(full.metrics.perplexity!.mean);
  });

  it('runs a read selector on documents: the whole cache held, the read share as the net keep-rate', async () => {
    const config = validateSweepConfig({
      tasks: ['toy-lm'],
      policies: ['full', { name: 'quest', options: { pageSize: 2, minPages: 1, denseLayers: 0 } }],
      budgets: [0.25],
      seeds: [2],
      examplesPerCell: 4,
      batchSize: 4,
    });
    const env: CellEnvironment = {
      task: toyLmTask(),
      model,
      config,
      registry: createDefaultRegistry(),
      clock: steppingClock(),
    };
    const full = await runCell({ task: 'toy-lm', policy: 'full', budget: 1, seed: 2 }, env);
    const quest = await runCell({ task: 'toy-lm', policy: 'quest', budget: 0.25, seed: 2 }, env);
    const m = quest.metrics;
    expect(m.peakKvReduction).toEqual({ mean: 1, stderr: 0, n: 4 });
    expect(m.realisedBudget).toEqual({ mean: 1, stderr: 0, n: 4 });
    expect(m.netKeepRate!.mean).toBeGreaterThan(0);
    expect(m.netKeepRate!.mean).toBeLessThan(0.75);
    expect(m.perplexity!.mean).not.toBe(full.metrics.perplexity!.mean);
  });
});
