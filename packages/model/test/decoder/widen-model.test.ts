import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { layerTensorName, type ModelWidths, widenModel } from '../../src/decoder/index';
import { forwardRows, lively, randomTokens, VARIANTS } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** The tiny configs are D=32, Hq=4, Hkv=2 (group 2), I=64, hd=8. */
const WIDENINGS: readonly { name: string; widths: ModelWidths }[] = [
  {
    name: 'more KV heads, same group',
    widths: { hidden: 48, heads: 8, kvHeads: 4, intermediate: 96 },
  },
  { name: 'larger groups', widths: { hidden: 40, heads: 8, kvHeads: 2, intermediate: 64 } },
];

/** Largest |a − b| over every logit, relative to the largest |a|. */
function relativeGap(before: Float32Array[], after: Float32Array[]): number {
  let gap = 0;
  let top = 0;
  before.forEach((row, t) => {
    row.forEach((value, v) => {
      gap = Math.max(gap, Math.abs(value - after[t]![v]!));
      top = Math.max(top, Math.abs(value));
    });
  });
  return gap / top;
}

describe('widenModel', () => {
  for (const { name, config } of VARIANTS) {
    for (const widening of WIDENINGS) {
      it(`${name}, ${widening.name}: the wider model computes the same logits`, () => {
        const model = lively(config, 3);
        const wider = widenModel(model, widening.widths, 11);
        expect(wider.config).toMatchObject({
          hidden_size: widening.widths.hidden,
          num_attention_heads: widening.widths.heads,
          num_key_value_heads: widening.widths.kvHeads,
          intermediate_size: widening.widths.intermediate,
          head_dim: model.config.head_dim,
        });
        const tokens = randomTokens(4, 12, config.vocab_size);
        const gap = relativeGap(forwardRows(model, tokens), forwardRows(wider, tokens));
        expect(gap).toBeLessThan(1e-5);
        model.dispose();
        wider.dispose();
      });
    }
  }

  it('starts the new channels at zero and scales the old stream so every norm sees the same input', () => {
    const config = VARIANTS[1]!.config;
    const model = lively(config, 3);
    const wider = widenModel(model, WIDENINGS[0]!.widths, 11);
    const theirs = model.toTensors();
    const grown = wider.toTensors();
    const scale = Math.sqrt(48 / 32);
    const embedding = grown['model.embed_tokens.weight']!;
    const old = theirs['model.embed_tokens.weight']!;
    for (let row = 0; row < config.vocab_size; row++) {
      for (let c = 0; c < 48; c++) {
        const value = embedding.data[row * 48 + c]!;
        if (c < 32) expect(value).toBeCloseTo(old.data[row * 32 + c]! * scale, 6);
        else expect(value).toBe(0);
      }
    }
    const gain = grown['model.norm.weight']!.data;
    expect(gain[0]).toBeCloseTo(theirs['model.norm.weight']!.data[0]! / (scale * scale), 6);
    expect(gain[40]).toBeCloseTo(1 / (scale * scale), 6);
    const down = grown[layerTensorName(1, 'mlp.down_proj.weight')]!;
    for (let row = 32; row < 48; row++) {
      expect(down.data.subarray(row * 96, (row + 1) * 96).every((x) => x === 0)).toBe(true);
    }
    model.dispose();
    wider.dispose();
  });

  it('gives the new channels, heads and units a gradient at once', () => {
    const config = VARIANTS[0]!.config;
    const model = lively(config, 3);
    const wider = widenModel(model, WIDENINGS[0]!.widths, 11);
    const ids = tf.tensor2d(randomTokens(5, 8, config.vocab_size), [1, 8], 'int32');
    const names = [
      'model.embed_tokens.weight',
      layerTensorName(0, 'self_attn.o_proj.weight'),
      layerTensorName(1, 'mlp.down_proj.weight'),
    ];
    const variables = names.map((name) => wider.parameters.get(name)!);
    const { value, grads } = tf.variableGrads(
      () => tf.tidy(() => tf.sum(tf.square(wider.forward(ids).logits)) as tf.Scalar),
      variables,
    );
    const block = (name: string, rows: [number, number], cols: [number, number]) =>
      tf.tidy(() => {
        const grad = grads[wider.parameters.get(name)!.name]!;
        const part = tf.slice(grad, [rows[0], cols[0]], [rows[1] - rows[0], cols[1] - cols[0]]);
        return tf.norm(part).dataSync()[0]!;
      });
    // The embedding's new columns (the zero channels), the new heads' output columns and the
    // new MLP units' down-projection columns.
    expect(block(names[0]!, [0, config.vocab_size], [32, 48])).toBeGreaterThan(1e-4);
    expect(block(names[1]!, [0, 32], [32, 64])).toBeGreaterThan(1e-4);
    expect(block(names[2]!, [0, 32], [64, 96])).toBeGreaterThan(1e-4);
    tf.dispose([ids, value, ...Object.values(grads)]);
    model.dispose();
    wider.dispose();
  });

  it('refuses narrower widths and smaller groups, naming the field', () => {
    const model = lively(VARIANTS[0]!.config, 3);
    const base: ModelWidths = { hidden: 32, heads: 4, kvHeads: 2, intermediate: 64 };
    const cases: [Partial<ModelWidths>, string][] = [
      [{ hidden: 16 }, 'hidden'],
      [{ hidden: 40.5 }, 'hidden'],
      [{ heads: 2, kvHeads: 2 }, 'heads'],
      [{ heads: 8, kvHeads: 8 }, 'heads'],
      [{ kvHeads: 1 }, 'kvHeads'],
      [{ intermediate: Number.NaN }, 'intermediate'],
    ];
    for (const [change, argument] of cases) {
      expect(() => widenModel(model, { ...base, ...change }, 1), argument).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument }),
      );
    }
    model.dispose();
  });
});
