import type { KVCacheStore, LayerControls, LayerView } from '@lethe/kv-cache';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { HIDDEN_LOGIT } from '../../src/decoder/index';
import { CACHE_IMPLEMENTATIONS, pagedCache } from '../support/cache-implementations';
import { lively, maxAbsDiff, randomTokens, storeFor, takeLogits, tinyConfig } from './helpers';
import { type ReferenceAnchors, tokenKeepByDefinition } from './token-keep-reference';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ model_type: 'qwen2' });
const LAYERS = config.num_hidden_layers;
const KV = config.num_key_value_heads;
const PAGE = 4;
const DEFAULT_ANCHORS: ReferenceAnchors = { sinks: 4, window: 2 };
const PROMPTS = [randomTokens(1, 41, config.vocab_size), randomTokens(2, 26, config.vocab_size)];
const NEXT = Int32Array.of(5, 11);

/** A copy of a layer view (views are scratch buffers). */
function copyView(view: LayerView): LayerView {
  return { ...view, keys: view.keys.slice(), liveCounts: view.liveCounts.slice() };
}

/** Entries of the pages listed, per head. */
function inPages(pages: readonly Int32Array[], view: LayerView): number[][] {
  return pages.map((list, h) =>
    Array.from({ length: view.liveCounts[h]! }, (_, i) => i).filter((i) =>
      list.includes(Math.floor(i / PAGE)),
    ),
  );
}

/** The `[Hkv, maxLive]` bias hiding every entry outside `read`, plus `extra` when given. */
function maskBias(view: LayerView, read: number[][], extra?: Float32Array): Float32Array {
  const bias = new Float32Array(KV * view.maxLive).fill(HIDDEN_LOGIT);
  read.forEach((entries, h) => {
    for (const i of entries) bias[h * view.maxLive + i] = 0;
  });
  if (extra) for (let i = 0; i < bias.length; i++) bias[i]! += extra[i]!;
  return bias;
}

/** One scenario: controls per sequence and layer, and the read anchors. */
interface Scenario {
  readonly name: string;
  readonly controls: (views: LayerView[][]) => (LayerControls | undefined)[][];
  readonly anchors?: ReferenceAnchors;
}

const rng = new Rng(5);
const SCENARIOS: Scenario[] = [
  {
    name: 'κ in every layer of both sequences',
    controls: () => [
      [{ tokenKeep: 0.3 }, { tokenKeep: 0.3 }],
      [{ tokenKeep: 0.5 }, { tokenKeep: 0.45 }],
    ],
  },
  {
    name: 'κ with readPages (intersection), attentionBias and other anchors',
    anchors: { sinks: 1, window: 3 },
    controls: (views) => [
      [{ tokenKeep: 0.4, readPages: [Int32Array.of(0, 3, 4, 9), Int32Array.of(1, 2, 10)] }, {}],
      [
        { tokenKeep: 1 },
        { tokenKeep: 0.35, attentionBias: rng.normal(KV * views[1]![1]!.maxLive) },
      ],
    ],
  },
  {
    name: 'κ without anchors beside a dense sequence',
    anchors: { sinks: 0, window: 0 },
    controls: () => [
      [{ tokenKeep: 0.2 }, { tokenKeep: 0.6 }],
      [undefined, undefined],
    ],
  },
  {
    name: 'κ so small that only the anchors are read',
    controls: () => [
      [{ tokenKeep: 0.05 }, { tokenKeep: 0.05 }],
      [{ tokenKeep: 0.01 }, { tokenKeep: 0.01 }],
    ],
  },
];

describe.each(CACHE_IMPLEMENTATIONS)('tokenKeep: a gathered read (%s)', (_, create) => {
  it.each(SCENARIOS)(
    'equals the masked read and a physically restricted cache: $name',
    (scenario) => {
      const model = lively(config, 71);
      const options = { pageSize: PAGE, queryWindow: 1 };
      const batch = () => PROMPTS.map(() => storeFor(create, config, options));
      const [gathered, masked, evicted] = [batch(), batch(), batch()] as KVCacheStore[][];
      for (const caches of [gathered!, masked!, evicted!])
        takeLogits(model.prefill(caches, PROMPTS));
      const views = gathered!.map((cache) =>
        Array.from({ length: LAYERS }, (_, l) => copyView(cache.view(l))),
      );
      const controls = scenario.controls(views);
      const anchors = scenario.anchors ?? DEFAULT_ANCHORS;
      const out = model.decodeStep(gathered!, NEXT, controls, {
        ...(scenario.anchors ? { readAnchors: scenario.anchors } : {}),
      });
      const { reads } = out;
      const [sparse] = [takeLogits(out)];

      // What each token read, by definition, from the query it recorded.
      const read = gathered!.map((cache, b) =>
        Array.from({ length: LAYERS }, (_, l) => {
          const view = views[b]![l]!;
          const control = controls[b]![l];
          let sets = Array.from(view.liveCounts, (live) =>
            Array.from({ length: live }, (_, i) => i),
          );
          if (control?.readPages) {
            const pages = inPages(control.readPages, view);
            sets = sets.map((set, h) => set.filter((i) => pages[h]!.includes(i)));
          }
          if (control?.tokenKeep !== undefined) {
            const query = cache.observe(l, {
              attentionWindow: 1,
              accumulatedAttention: false,
              keys: false,
              values: false,
              hidden: false,
            }).queries!;
            const kept = tokenKeepByDefinition(view, query, control.tokenKeep, anchors, PAGE);
            sets = sets.map((set, h) => set.filter((i) => kept[h]!.includes(i)));
          }
          return sets;
        }),
      );
      read.forEach((perLayer, b) => {
        perLayer.forEach((sets, l) => {
          sets.forEach((set, h) => {
            const at = (b * LAYERS + l) * KV + h;
            expect(reads.entries[at]).toBe(set.length); // the realised count is the definition's
            expect(reads.live[at]).toBe(views[b]![l]!.liveCounts[h]);
          });
        });
      });

      // The masked read: the dense view with −1e9 on every entry not read.
      const maskedControls = views.map((perLayer, b) =>
        perLayer.map((view, l) => ({
          attentionBias: maskBias(view, read[b]![l]!, controls[b]![l]?.attentionBias),
        })),
      );
      const [maskedLogits] = [takeLogits(model.decodeStep(masked!, NEXT, maskedControls))];

      // A cache that holds only the entries read, read densely.
      evicted!.forEach((cache, b) => {
        for (let l = 0; l < LAYERS; l++) {
          cache.keep(l, {
            granularity: 'head',
            keep: read[b]![l]!.map((set) => Int32Array.from(set)),
          });
        }
      });
      const evictedControls = views.map((perLayer, b) =>
        perLayer.map((view, l) => {
          const extra = controls[b]![l]?.attentionBias;
          if (extra === undefined) return undefined;
          const width = Math.max(...read[b]![l]!.map((set) => set.length));
          const bias = new Float32Array(KV * width);
          read[b]![l]!.forEach((set, h) => {
            set.forEach((i, j) => {
              bias[h * width + j] = extra[h * view.maxLive + i]!;
            });
          });
          return { attentionBias: bias };
        }),
      );
      const [evictedLogits] = [takeLogits(model.decodeStep(evicted!, NEXT, evictedControls))];

      for (let b = 0; b < PROMPTS.length; b++) {
        expect(maxAbsDiff(sparse![b]!, maskedLogits![b]!)).toBeLessThanOrEqual(1e-5);
        expect(maxAbsDiff(sparse![b]!, evictedLogits![b]!)).toBeLessThanOrEqual(1e-5);
      }
      model.dispose();
    },
  );
});

describe('tokenKeep', () => {
  it('κ = 1 is bit-identical to a dense step and reads every entry', () => {
    const model = lively(config, 72);
    const [plain, keep1] = [0, 1].map(() => PROMPTS.map(() => storeFor(pagedCache, config))) as [
      KVCacheStore[],
      KVCacheStore[],
    ];
    takeLogits(model.prefill(plain, PROMPTS));
    takeLogits(model.prefill(keep1, PROMPTS));
    const ones = Array.from({ length: LAYERS }, () => ({ tokenKeep: 1 }));
    for (let s = 0; s < 5; s++) {
      const tokens = Int32Array.of(s, 2 * s + 1);
      const dense = model.decodeStep(plain, tokens);
      const full = model.decodeStep(keep1, tokens, [ones, ones]);
      expect(full.reads.entries).toEqual(full.reads.live);
      expect(dense.reads).toEqual(full.reads);
      expect(takeLogits(full)).toEqual(takeLogits(dense));
    }
    model.dispose();
  });

  it('gathers what it reads: no packed view of the layer, exactly the entries read copied', () => {
    const model = lively(config, 73);
    const calls = { view: 0, gathered: 0 };
    const counted = (cache: KVCacheStore): KVCacheStore =>
      new Proxy(cache, {
        get: (target, key) => {
          if (key === 'view') {
            return (layer: number) => {
              calls.view += 1;
              return target.view(layer);
            };
          }
          if (key === 'gather') {
            return (...args: Parameters<KVCacheStore['gather']>) => {
              const count = target.gather(...args);
              calls.gathered += count;
              return count;
            };
          }
          return Reflect.get(target, key, target);
        },
      });
    const caches = PROMPTS.map(() => counted(storeFor(pagedCache, config, { pageSize: PAGE })));
    takeLogits(model.prefill(caches, PROMPTS));
    for (const controls of [undefined, [[{ tokenKeep: 0.25 }, { tokenKeep: 0.5 }], undefined]]) {
      calls.view = 0;
      calls.gathered = 0;
      const out = model.decodeStep(caches, NEXT, controls);
      expect(calls.view).toBe(0);
      expect(calls.gathered).toBe(out.reads.entries.reduce((a, b) => a + b, 0));
      takeLogits(out);
    }
    model.dispose();
  });

  it('rejects a bad κ or bad read anchors with a coded error, leaking nothing and changing no cache', () => {
    const model = lively(config, 74);
    const cache = storeFor(pagedCache, config);
    takeLogits(model.prefill([cache], [PROMPTS[0]!]));
    const step =
      (control: LayerControls, options = {}) =>
      () =>
        model.decodeStep([cache], Int32Array.of(3), [[undefined, control]], options);
    const before = tf.memory().numTensors;
    for (const bad of [0, -0.5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(step({ tokenKeep: bad })).toThrowError(
        expect.objectContaining({ code: 'E_BUDGET', argument: 'controls[0][1].tokenKeep' }),
      );
    }
    expect(step({ tokenKeep: '0.5' as unknown as number })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'controls[0][1].tokenKeep' }),
    );
    for (const [readAnchors, argument] of [
      [{ sinks: -1 }, 'readAnchors.sinks'],
      [{ window: 0.5 }, 'readAnchors.window'],
      [7, 'readAnchors'],
    ] as const) {
      expect(step({ tokenKeep: 0.5 }, { readAnchors })).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument }),
      );
    }
    // prefill reads densely: κ < 1 over a chunk of tokens is refused, κ = 1 accepted
    const other = storeFor(pagedCache, config);
    expect(() =>
      model.prefill([other], [PROMPTS[1]!], { controls: [[{ tokenKeep: 0.5 }, undefined]] }),
    ).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'controls[0][0].tokenKeep' }),
    );
    expect(other.length(0)).toBe(0);
    const ids = tf.tensor2d([[1, 2, 3]], [1, 3], 'int32');
    expect(() => model.forward(ids, { controls: [{ tokenKeep: 0.5 }, undefined] })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'controls[0]' }),
    );
    ids.dispose();
    expect(tf.memory().numTensors).toBe(before);
    expect(cache.length(0)).toBe(PROMPTS[0]!.length);
    takeLogits(
      model.prefill([other], [PROMPTS[1]!], { controls: [[{ tokenKeep: 1 }, undefined]] }),
    );
    model.dispose();
  });

  it('keeps the tensor count flat over 150 sparse steps with evictions and failing steps', () => {
    const model = lively(config, 75);
    const caches = [
      storeFor(pagedCache, config, { pageSize: PAGE }),
      storeFor(pagedCache, config, { pageSize: PAGE, anchors: { sinks: 2, window: 2 } }),
    ];
    takeLogits(model.prefill(caches, PROMPTS));
    const controls = (s: number) => [
      [{ tokenKeep: 0.25 + (s % 4) / 8 }, { tokenKeep: 0.5 }],
      [undefined, { tokenKeep: 0.3, readPages: [Int32Array.of(0, 1), Int32Array.of(1)] }],
    ];
    const step = (s: number) => {
      takeLogits(model.decodeStep(caches, Int32Array.of(s % 37, (7 * s) % 37), controls(s)));
      const live = caches[1]!.liveCounts(0)[0]!;
      if (live > 48) {
        for (let l = 0; l < LAYERS; l++)
          caches[1]!.keep(l, {
            granularity: 'layer',
            keep: Int32Array.from({ length: 30 }, (_, i) => i),
          });
      }
    };
    step(0);
    const before = tf.memory().numTensors;
    for (let s = 1; s <= 150; s++) {
      step(s);
      if (s % 25 === 0) {
        const lengths = caches.map((cache) => cache.length(0));
        expect(() =>
          model.decodeStep(caches, Int32Array.of(1, 2), [[{ tokenKeep: 0 }, undefined], undefined]),
        ).toThrowError(/E_BUDGET/);
        expect(caches.map((cache) => cache.length(0))).toEqual(lengths);
      }
    }
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });
});
