import { LetheError } from '@lethe/core';
import {
  type LayerControls,
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type ReadSelector,
} from '@lethe/kv-cache';
import { QuestSelector } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { cacheFor, lively, maxAbsDiff, randomTokens, takeLogits, tinyConfig } from './helpers';
import { questPagesByDefinition } from './quest-reference';

beforeAll(async () => {
  await initBackend('wasm');
});

// Four layers, so that Quest's two dense layers leave two sparse ones.
const config = tinyConfig({ num_hidden_layers: 4 });
const LAYERS = config.num_hidden_layers;
const QUERY_SIZE = config.num_attention_heads * config.head_dim;
const PAGE = 4;
const WINDOW_1: ObservationNeeds = { ...NO_NEEDS, attentionWindow: 1 };

/** Wraps a selector, recording what each call saw and returned. */
class RecordingSelector implements ReadSelector {
  readonly name = 'recording';
  readonly calls: {
    layer: number;
    step: number;
    query: Float32Array;
    pages: readonly Int32Array[] | undefined;
  }[] = [];

  constructor(private readonly inner: ReadSelector) {}

  get needs(): ObservationNeeds {
    return this.inner.needs;
  }

  get pageSize(): number {
    return this.inner.pageSize;
  }

  selectPages(observation: LayerObservation, query: Float32Array) {
    const pages = this.inner.selectPages(observation, query);
    this.calls.push({ layer: observation.layer, step: observation.step, query, pages });
    return pages;
  }
}

/** A selector returning fixed pages, for plumbing tests. */
function fixedSelector(
  pages: (layer: number) => readonly Int32Array[] | undefined,
  overrides: Partial<ReadSelector> = {},
): ReadSelector {
  return {
    name: 'fixed',
    needs: NO_NEEDS,
    pageSize: PAGE,
    selectPages: (observation) => pages(observation.layer),
    ...overrides,
  };
}

interface ReferenceRun {
  /** Largest logit difference between the selector run and the explicit-readPages run. */
  readonly worst: number;
  /** Steps at which some layer read sparsely. */
  readonly sparseSteps: number;
  /** Layers that ever read sparsely. */
  readonly sparseLayers: Set<number>;
  /** Sparse head reads whose pages are not simply the newest ones. */
  readonly scattered: number;
  /** Logits of the selector run, per step. */
  readonly logits: Float32Array[];
}

/**
 * Decodes `steps` teacher-forced tokens twice from the same prompt: cache A with a Quest
 * selector, cache B with explicit `readPages` that the test computes itself from B's keys and
 * the query A recorded for the step (by `questPagesByDefinition`, no selector code). Also checks
 * that the selector was handed exactly that query, and that both caches stay identical.
 */
function runAgainstReference(denseLayers: number | undefined, steps: number): ReferenceRun {
  const model = lively(config, 61);
  const tokenBudget = 8; // max(3, 8 / 4) = 3 pages of 4
  const quest = new RecordingSelector(
    new QuestSelector({
      tokenBudget,
      pageSize: PAGE,
      ...(denseLayers !== undefined ? { denseLayers } : {}),
    }),
  );
  const [a, b] = [0, 1].map(() => cacheFor(config, { pageSize: PAGE, queryWindow: 1 })) as [
    ReturnType<typeof cacheFor>,
    ReturnType<typeof cacheFor>,
  ];
  const prompt = randomTokens(62, 9, config.vocab_size);
  const tokens = randomTokens(63, steps, config.vocab_size);
  takeLogits(model.prefill([a], [prompt]));
  takeLogits(model.prefill([b], [prompt]));
  let worst = 0;
  let sparseSteps = 0;
  const sparseLayers = new Set<number>();
  let scattered = 0;
  const logits: Float32Array[] = [];
  for (let s = 0; s < steps; s++) {
    const token = Int32Array.of(tokens[s]!);
    const position = a.length(0);
    quest.calls.length = 0;
    const [withSelector] = takeLogits(
      model.decodeStep([a], token, undefined, { readSelector: quest }),
    );
    logits.push(withSelector!);
    expect(quest.calls.map((c) => c.layer)).toEqual([0, 1, 2, 3]);
    const controls: (LayerControls | undefined)[] = [];
    for (let l = 0; l < LAYERS; l++) {
      const query = a.observe(l, WINDOW_1).queries!; // [1, Hq, hd]: this step's query at layer l
      expect(query.length).toBe(QUERY_SIZE);
      expect(Array.from(quest.calls[l]!.query)).toEqual(Array.from(query));
      expect(quest.calls[l]!.step).toBe(position);
      const pages = questPagesByDefinition(b.view(l), query, {
        tokenBudget,
        pageSize: PAGE,
        ...(denseLayers !== undefined ? { denseLayers } : {}),
      });
      controls.push(pages && { readPages: pages });
      if (pages !== undefined) sparseLayers.add(l);
      pages?.forEach((list) => {
        if (list[0] !== list[list.length - 1]! - (list.length - 1)) scattered++;
      });
    }
    if (controls.some((c) => c !== undefined)) sparseSteps++;
    const [explicit] = takeLogits(model.decodeStep([b], token, [controls]));
    worst = Math.max(worst, maxAbsDiff(withSelector!, explicit!));
    for (let l = 0; l < LAYERS; l++) {
      expect(Array.from(b.observe(l, WINDOW_1).queries!)).toEqual(
        Array.from(a.observe(l, WINDOW_1).queries!),
      );
    }
  }
  model.dispose();
  return { worst, sparseSteps, sparseLayers, scattered, logits };
}

describe('read selector in decode', () => {
  it('Quest at a small budget gives the logits of explicit readPages computed from its definition', () => {
    const run = runAgainstReference(0, 24);
    expect(run.worst).toBeLessThan(1e-6);
    expect(run.sparseSteps).toBeGreaterThan(15);
    expect(run.scattered).toBeGreaterThan(10);
    expect([...run.sparseLayers].sort()).toEqual([0, 1, 2, 3]);
  });

  it('Quest keeps the first two layers dense by default', () => {
    const steps = 16;
    const byDefault = runAgainstReference(undefined, steps);
    expect(byDefault.worst).toBeLessThan(1e-6);
    expect([...byDefault.sparseLayers].sort()).toEqual([2, 3]);
    // and that matters: with every layer sparse the logits move
    const allSparse = runAgainstReference(0, steps);
    const moved = byDefault.logits.some((row, s) => maxAbsDiff(row, allSparse.logits[s]!) > 1e-3);
    expect(moved).toBe(true);
  });

  it('sparse reads change the logits compared with a dense decode', () => {
    const model = lively(config, 61);
    const prompt = randomTokens(62, 9, config.vocab_size);
    const tokens = randomTokens(63, 12, config.vocab_size);
    const dense = cacheFor(config, { pageSize: PAGE });
    takeLogits(model.prefill([dense], [prompt]));
    const denseRows = Array.from(
      tokens,
      (t) => takeLogits(model.decodeStep([dense], Int32Array.of(t)))[0]!,
    );
    model.dispose();
    const sparse = runAgainstReference(0, 12);
    expect(sparse.logits.some((row, s) => maxAbsDiff(row, denseRows[s]!) > 1e-3)).toBe(true);
  });

  it('intersects the selector pages with readPages from the controls', () => {
    const model = lively(config, 64);
    const cache = cacheFor(config, { pageSize: PAGE });
    takeLogits(model.prefill([cache], [randomTokens(65, 11, config.vocab_size)])); // 3 pages
    const other = cache.clone();
    const selector = fixedSelector((l) =>
      l === 3 ? [Int32Array.of(0, 2), Int32Array.of(1, 2, 2)] : undefined,
    );
    const controls: (LayerControls | undefined)[] = [
      { readPages: [Int32Array.of(1), Int32Array.of(0, 2)] }, // selector dense here: kept as is
      undefined,
      undefined,
      { readPages: [Int32Array.of(2, 0, 1), Int32Array.of(0, 2)] },
    ];
    const [both] = takeLogits(
      model.decodeStep([cache], Int32Array.of(5), [controls], { readSelector: selector }),
    );
    const intersection: (LayerControls | undefined)[] = [
      controls[0],
      undefined,
      undefined,
      { readPages: [Int32Array.of(0, 2), Int32Array.of(2)] },
    ];
    const [expected] = takeLogits(model.decodeStep([other], Int32Array.of(5), [intersection]));
    expect(maxAbsDiff(both!, expected!)).toBeLessThan(1e-6);
    model.dispose();
  });

  it('asks the selector per sequence of a batch, each with its own cache and query', () => {
    const model = lively(config, 66);
    const quest = new QuestSelector({ tokenBudget: 8, pageSize: PAGE, denseLayers: 1 });
    const prompts = [randomTokens(67, 14, config.vocab_size), randomTokens(68, 19, 37)];
    const batch = prompts.map(() => cacheFor(config, { pageSize: PAGE }));
    const single = prompts.map(() => cacheFor(config, { pageSize: PAGE }));
    takeLogits(model.prefill(batch, prompts));
    prompts.forEach((p, b) => takeLogits(model.prefill([single[b]!], [p])));
    for (let s = 0; s < 6; s++) {
      const tokens = Int32Array.of((3 * s) % 37, (5 * s + 1) % 37);
      const rows = takeLogits(model.decodeStep(batch, tokens, undefined, { readSelector: quest }));
      single.forEach((cache, b) => {
        const [alone] = takeLogits(
          model.decodeStep([cache], tokens.subarray(b, b + 1), undefined, {
            readSelector: quest,
          }),
        );
        expect(maxAbsDiff(rows[b]!, alone!)).toBeLessThan(1e-5);
      });
    }
    model.dispose();
  });

  it('rejects bad selectors and bad pages with stable codes, leaving the cache untouched', () => {
    const model = lively(config, 69);
    const cache = cacheFor(config, { pageSize: PAGE });
    takeLogits(model.prefill([cache], [randomTokens(70, 10, config.vocab_size)]));
    const step = (readSelector: unknown) => () =>
      model.decodeStep([cache], Int32Array.of(1), undefined, {
        readSelector: readSelector as ReadSelector,
      });
    const fails = (readSelector: unknown, code: string, argument: string) => {
      let caught: unknown;
      try {
        step(readSelector)();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(LetheError);
      expect(caught).toMatchObject({ code, argument });
      expect(cache.length(0)).toBe(10);
    };
    fails({ name: 'x' }, 'E_ARG', 'readSelector');
    fails(new QuestSelector({ tokenBudget: 8, pageSize: 8 }), 'E_ARG', 'readSelector.pageSize');
    fails(
      fixedSelector(() => undefined, { needs: { ...NO_NEEDS, hidden: true } }),
      'E_ARG',
      'readSelector.needs.hidden',
    );
    fails(
      fixedSelector(() => undefined, { needs: { ...NO_NEEDS, attentionWindow: 2 } }),
      'E_STATE',
      'caches[0]',
    );
    fails(
      fixedSelector(() => undefined, { needs: { ...NO_NEEDS, accumulatedAttention: true } }),
      'E_STATE',
      'caches[0]',
    );
    fails(
      fixedSelector((l) => (l === 2 ? [Int32Array.of(0, 3), Int32Array.of(0)] : undefined)),
      'E_ARG',
      'readSelector.selectPages[0][2]',
    );
    fails(
      fixedSelector((l) => (l === 1 ? [Int32Array.of(0)] : undefined)),
      'E_SHAPE',
      'readSelector.selectPages[0][1]',
    );
    fails(
      fixedSelector((l) => (l === 1 ? [[0], [1]] : undefined) as never),
      'E_DTYPE',
      'readSelector.selectPages[0][1]',
    );
    fails(
      fixedSelector(() => Int32Array.of(0) as never),
      'E_ARG',
      'readSelector.selectPages[0][0]',
    );
    expect(() =>
      model.prefill([cache], [Int32Array.of(1)], {
        readSelector: fixedSelector(() => undefined),
      } as never),
    ).toThrow(expect.objectContaining({ code: 'E_ARG', argument: 'readSelector' }));
    expect(cache.length(0)).toBe(10);
    // a good step still works afterwards
    takeLogits(step(fixedSelector(() => [Int32Array.of(1, 2), Int32Array.of(0)]))());
    expect(cache.length(0)).toBe(11);
    model.dispose();
  });
});
