import type { KVCache, LayerControls, ReadSelector } from '@lethe/kv-cache';
import { QuestSelector } from '@lethe/policies-heuristic';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel, KeyBiasHook, StepResult } from '../../src/decoder/index';
import type { ModelConfig } from '../../src/io/index';
import { LinearGate } from '../runtime/batcher-fixtures';
import { cacheFor, lively, randomTokens, tinyConfig } from './helpers';

// A cached step computes each sequence bit for bit as it computes it alone, whatever else the
// batch holds: other lengths, ragged prefill chunks, other controls, read selectors and gates.

beforeAll(async () => {
  await initBackend('wasm');
});

const PAGE = 4;
const CONFIGS: [string, ModelConfig][] = [
  ['2 KV heads', tinyConfig({ vocab_size: 29, max_position_embeddings: 512 })],
  [
    '1 KV head',
    tinyConfig({ vocab_size: 29, max_position_embeddings: 512, num_key_value_heads: 1 }),
  ],
];

/** A sequence of the test batch: its cache options, gate hook, read selector and controls. */
interface Lane {
  readonly prompt: Int32Array;
  readonly gated: boolean;
  readonly selector?: ReadSelector;
  readonly controls?: readonly (LayerControls | undefined)[];
}

/** Logits and final hidden rows of a step, downloaded and freed. */
function rowsOf(out: StepResult): { logits: Float32Array[]; hidden: Float32Array[] } {
  const split = (t: tf.Tensor) => {
    const data = t.dataSync() as Float32Array;
    const [rows, width] = t.shape as [number, number];
    return Array.from({ length: rows }, (_, b) => data.slice(b * width, (b + 1) * width));
  };
  const result = { logits: split(out.logits), hidden: split(out.hidden) };
  tf.dispose([out.logits, out.hidden]);
  return result;
}

/** Every layer's packed keys and values, for exact comparison. */
function entries(cache: KVCache): number[][] {
  return Array.from({ length: cache.geometry.layers }, (_, l) => {
    const view = cache.view(l);
    return [...view.keys, ...view.values!, ...(view.gates ?? [])];
  });
}

describe.each(CONFIGS)('batch invariance (%s)', (_, config) => {
  let model: DecoderModel;
  let gate: LinearGate;
  let hook: KeyBiasHook;
  beforeAll(() => {
    model = lively(config, 31);
    gate = new LinearGate(config, 3);
    hook = (layer, input) => gate.logGates(layer, input);
  });
  afterAll(() => {
    gate.dispose();
  });

  const quest = () => new QuestSelector({ tokenBudget: 8, pageSize: PAGE, denseLayers: 0 });
  const lanes = (): Lane[] => [
    { prompt: randomTokens(1, 23, config.vocab_size), gated: false },
    { prompt: randomTokens(2, 9, config.vocab_size), gated: true, selector: quest() },
    {
      prompt: randomTokens(3, 30, config.vocab_size),
      gated: false,
      controls: [{ tokenKeep: 0.4 }, { tokenKeep: 0.6, mlpInputKeep: 0.5, activationBits: 4 }],
    },
    { prompt: randomTokens(4, 2, config.vocab_size), gated: true },
  ];

  /**
   * Chunked prefill (chunks of 7: ragged, on caches of different lengths), then 6 decode steps,
   * of `lanes` in one batch; returns every step's rows per lane and the caches.
   */
  function run(batch: readonly Lane[]): { rows: Float32Array[][]; caches: KVCache[] } {
    const caches = batch.map((lane) =>
      cacheFor(config, { pageSize: PAGE, storeGates: lane.gated }),
    );
    const hooks = batch.map((lane) => (lane.gated ? hook : undefined));
    const keyBias = hooks.some((h) => h !== undefined) ? { keyBias: hooks } : {};
    const rows: Float32Array[][] = batch.map(() => []);
    const longest = Math.max(...batch.map((lane) => lane.prompt.length));
    for (let start = 0; start < longest; start += 7) {
      const live = batch.flatMap((lane, b) => (lane.prompt.length > start ? [b] : []));
      const out = model.prefill(
        live.map((b) => caches[b]!),
        live.map((b) => batch[b]!.prompt.subarray(start, start + 7)),
        hooks.some((h) => h !== undefined) ? { keyBias: live.map((b) => hooks[b]) } : {},
      );
      const { logits, hidden } = rowsOf(out);
      live.forEach((b, i) => rows[b]!.push(logits[i]!, hidden[i]!));
    }
    for (let step = 0; step < 6; step++) {
      const tokens = Int32Array.from(
        batch,
        (lane) => (lane.prompt[0]! + step * 5 + lane.prompt.length) % 29,
      );
      const controls = batch.some((lane) => lane.controls !== undefined)
        ? batch.map((lane) => lane.controls)
        : undefined;
      const selectors = batch.map((lane) => lane.selector);
      const out = model.decodeStep(caches, tokens, controls, {
        ...keyBias,
        ...(selectors.some((s) => s !== undefined) ? { readSelector: selectors } : {}),
      });
      const { logits, hidden } = rowsOf(out);
      batch.forEach((_, b) => rows[b]!.push(logits[b]!, hidden[b]!));
    }
    return { rows, caches };
  }

  it('each sequence gets bit for bit what it gets alone', () => {
    const before = tf.memory().numTensors;
    const all = lanes();
    const together = run(all);
    all.forEach((lane, b) => {
      const alone = run([lane]);
      expect(together.rows[b]!.length).toBe(alone.rows[0]!.length);
      together.rows[b]!.forEach((row, i) => {
        expect(Array.from(row), `lane ${b}, output ${i}`).toEqual(Array.from(alone.rows[0]![i]!));
      });
      expect(entries(together.caches[b]!)).toEqual(entries(alone.caches[0]!));
    });
    expect(tf.memory().numTensors).toBe(before);
  });

  it('long and short prompts whose attention takes different matmul paths', () => {
    // 300 tokens: G·T·hd·(T + S) ≥ 2^20 multiply-adds, split into XNNPACK products; 80: not.
    const long = { prompt: randomTokens(5, 300, config.vocab_size), gated: false };
    const short = { prompt: randomTokens(6, 80, config.vocab_size), gated: false };
    const prefillAll = (batch: Lane[]) => {
      const caches = batch.map(() => cacheFor(config, { pageSize: PAGE }));
      return rowsOf(
        model.prefill(
          caches,
          batch.map((lane) => lane.prompt),
        ),
      ).logits;
    };
    const together = prefillAll([long, short]);
    expect(Array.from(together[0]!)).toEqual(Array.from(prefillAll([long])[0]!));
    expect(Array.from(together[1]!)).toEqual(Array.from(prefillAll([short])[0]!));
  });
});

describe('batch invariance of a large chunk (attended sequence by sequence)', () => {
  it('a batch whose scores are too large for one tensor equals each prompt alone', () => {
    const config = tinyConfig({ vocab_size: 29, max_position_embeddings: 1024 });
    const model = lively(config, 17);
    // together: 2·4·1000·1000 = 8 M score floats, past the per-sequence threshold (4 Mi);
    // alone: 4 M and less, attended as a batch of one
    const long = randomTokens(8, 1000, config.vocab_size);
    const short = randomTokens(9, 300, config.vocab_size);
    const prefillAll = (prompts: Int32Array[]) =>
      rowsOf(
        model.prefill(
          prompts.map(() => cacheFor(config, { pageSize: PAGE })),
          prompts,
        ),
      ).logits;
    const before = tf.memory().numTensors;
    const together = prefillAll([long, short]);
    expect(Array.from(together[0]!)).toEqual(Array.from(prefillAll([long])[0]!));
    expect(Array.from(together[1]!)).toEqual(Array.from(prefillAll([short])[0]!));
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });
});

describe('per-sequence step options', () => {
  const config = CONFIGS[0]![1];
  let model: DecoderModel;
  let gate: LinearGate;
  let hook: KeyBiasHook;
  beforeAll(() => {
    model = lively(config, 31);
    gate = new LinearGate(config, 3);
    hook = (layer, input) => gate.logGates(layer, input);
  });
  afterAll(() => {
    gate.dispose();
  });

  const prompts = () => [Int32Array.of(1, 2, 3), Int32Array.of(4, 5)];

  it('refuses gate hooks that do not match the caches', () => {
    const plain = () => [cacheFor(config), cacheFor(config)];
    const mixed = () => [cacheFor(config, { storeGates: true }), cacheFor(config)];
    expectLetheError(
      () => model.prefill(plain(), prompts(), { keyBias: [hook] }),
      'E_SHAPE',
      'keyBias',
    );
    expectLetheError(
      () => model.prefill(mixed(), prompts(), { keyBias: [hook, 3 as never] }),
      'E_ARG',
      'keyBias[1]',
    );
    expectLetheError(
      () => model.prefill(mixed(), prompts(), { keyBias: 3 as never }),
      'E_ARG',
      'keyBias',
    );
    expectLetheError(
      () => model.prefill(mixed(), prompts(), { keyBias: [undefined, hook] }),
      'E_STATE',
      'caches[0]',
    );
    expectLetheError(
      () => model.prefill(mixed(), prompts(), { keyBias: hook }),
      'E_STATE',
      'caches[1]',
    );
    const silent: KeyBiasHook = () => undefined;
    const before = tf.memory().numTensors;
    const caches = mixed();
    expectLetheError(
      () => model.prefill(caches, prompts(), { keyBias: [silent, undefined] }),
      'E_STATE',
      'keyBias[0]',
    );
    expect(caches.map((c) => c.length(0))).toEqual([0, 0]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('refuses read selectors that do not match the caches', () => {
    const caches = [cacheFor(config, { pageSize: PAGE }), cacheFor(config, { pageSize: 8 })];
    model.prefill(caches, prompts()).logits.dispose();
    const tokens = Int32Array.of(1, 2);
    const selector = new QuestSelector({ tokenBudget: 8, pageSize: PAGE, denseLayers: 0 });
    expectLetheError(
      () => model.decodeStep(caches, tokens, undefined, { readSelector: [selector] }),
      'E_SHAPE',
      'readSelector',
    );
    expectLetheError(
      () => model.decodeStep(caches, tokens, undefined, { readSelector: [selector, selector] }),
      'E_ARG',
      'readSelector.pageSize',
    );
    expectLetheError(
      () => model.decodeStep(caches, tokens, undefined, { readSelector: [undefined, selector] }),
      'E_ARG',
      'readSelector[1].pageSize',
    );
    expectLetheError(
      () => model.decodeStep(caches, tokens, undefined, { readSelector: [{} as never, undefined] }),
      'E_ARG',
      'readSelector[0]',
    );
    // Only the first cache reads through the selector; nothing was appended by the refusals.
    expect(caches.map((c) => c.length(0))).toEqual([3, 2]);
    const out = model.decodeStep(caches, tokens, undefined, {
      readSelector: [selector, undefined],
    });
    tf.dispose([out.logits, out.hidden]);
    expect(caches.map((c) => c.length(0))).toEqual([4, 3]);
  });
});
