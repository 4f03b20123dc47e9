import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { addLayers, DecoderModel, layerTensorName } from '../../src/decoder/index';
import { forwardRows, lively, randomTokens, VARIANTS } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('addLayers', () => {
  for (const { name, config } of VARIANTS) {
    it(`${name}: the deeper model computes the same logits, bit for bit`, () => {
      const model = lively(config, 3);
      const deeper = addLayers(model, 5, 11);
      expect(deeper.config.num_hidden_layers).toBe(5);
      const tokens = randomTokens(4, 9, config.vocab_size);
      const before = forwardRows(model, tokens);
      const after = forwardRows(deeper, tokens);
      for (let t = 0; t < tokens.length; t++) expect(after[t]).toEqual(before[t]);
      model.dispose();
      deeper.dispose();
    });
  }

  it('keeps the old tensors and draws the new layers as a random model of that depth would', () => {
    const config = VARIANTS[2]!.config;
    const model = lively(config, 3);
    const deeper = addLayers(model, 3, 11);
    const random = DecoderModel.random({ ...config, num_hidden_layers: 3 }, 11);
    const theirs = model.toTensors();
    const drawn = random.toTensors();
    const grown = deeper.toTensors();
    expect(Object.keys(grown).sort()).toEqual(Object.keys(drawn).sort());
    for (const [tensor, value] of Object.entries(grown)) {
      if (theirs[tensor] !== undefined) expect(value, tensor).toEqual(theirs[tensor]);
      else if (/o_proj|down_proj/.test(tensor)) expect(value.data.every((x) => x === 0)).toBe(true);
      else expect(value, tensor).toEqual(drawn[tensor]);
    }
    for (const m of [model, deeper, random]) m.dispose();
  });

  it("gives the new layers' output projections a gradient at once", () => {
    const config = VARIANTS[0]!.config;
    const model = lively(config, 3);
    const deeper = addLayers(model, 3, 11);
    const ids = tf.tensor2d(randomTokens(5, 8, config.vocab_size), [1, 8], 'int32');
    const projections = ['self_attn.o_proj.weight', 'mlp.down_proj.weight'].map(
      (suffix) => deeper.parameters.get(layerTensorName(2, suffix))!,
    );
    const { value, grads } = tf.variableGrads(
      () => tf.tidy(() => tf.sum(tf.square(deeper.forward(ids).logits)) as tf.Scalar),
      projections,
    );
    for (const variable of projections) {
      const norm = tf.tidy(() => tf.norm(grads[variable.name]!).dataSync()[0]!);
      expect(norm, variable.name).toBeGreaterThan(1e-3);
    }
    tf.dispose([ids, value, ...Object.values(grads)]);
    model.dispose();
    deeper.dispose();
  });

  it('refuses a depth that is not more than the model’s, naming layers', () => {
    const model = lively(VARIANTS[0]!.config, 3);
    for (const bad of [2, 1, 2.5, Number.NaN]) {
      expect(() => addLayers(model, bad, 1)).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'layers' }),
      );
    }
    model.dispose();
  });
});
