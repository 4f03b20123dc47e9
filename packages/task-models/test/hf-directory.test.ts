import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheGeometry, KVCache } from '@lethe/kv-cache';
import { CharTokenizer, type DecoderModel, HfTokenizer } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTaskModel } from '../src/load-task-model';
import { TASK_MODEL_FILE } from '../src/manifest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HF = join(ROOT, 'fixtures', 'hf');

let dir: string;
beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-hf-dir-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of fixture `name`, changed by `change`. */
async function changed(name: string, copy: string, change: (d: string) => Promise<void>) {
  const target = join(dir, copy);
  await cp(join(HF, name), target, { recursive: true });
  await change(target);
  return target;
}

/** Logits of every position of `ids` from the parallel forward. */
function forwardRows(model: DecoderModel, ids: Int32Array): Float32Array[] {
  const input = tf.tensor2d(ids, [1, ids.length], 'int32');
  const { logits } = model.forward(input);
  const data = logits.dataSync() as Float32Array;
  const vocab = model.config.vocab_size;
  input.dispose();
  logits.dispose();
  return Array.from(ids, (_, t) => data.slice(t * vocab, (t + 1) * vocab));
}

function lastLogits(out: { logits: tf.Tensor; hidden: tf.Tensor }): Float32Array {
  const data = out.logits.dataSync() as Float32Array;
  out.logits.dispose();
  out.hidden.dispose();
  return data;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  return a.reduce((worst, value, i) => Math.max(worst, Math.abs(value - b[i]!)), 0);
}

describe.each([
  ['tiny-llama', 'llama', ['<|end_of_text|>', '<|eot_id|>']],
  ['tiny-qwen2', 'qwen2', ['<|im_end|>', '<|endoftext|>']],
])('readModelDirectory on fixtures/hf/%s', (name, family, eos) => {
  it('builds a decoder whose prefill and decode steps match its forward pass', async () => {
    const loaded = await readModelDirectory(join(HF, name));
    const { model, tokenizer, chatTemplate, config } = loaded;
    expect(config.model_type).toBe(family);
    expect(tokenizer).toBeInstanceOf(HfTokenizer);
    const hf = tokenizer as HfTokenizer;
    expect(tokenizer!.vocabSize).toBe(config.vocab_size);
    expect(loaded.eosTokenIds).toEqual(eos.map((token) => hf.specialTokens.get(token)));
    const prompt = chatTemplate!.render([{ role: 'user', content: 'What does the cache keep?' }], {
      addGenerationPrompt: true,
    });
    const ids = tokenizer!.encode(prompt);
    const next = tokenizer!.encode(' It keeps');
    const all = Int32Array.from([...ids, ...next]);
    const reference = forwardRows(model, all);
    const cache = new KVCache({
      geometry: cacheGeometry({
        layers: config.num_hidden_layers,
        kvHeads: config.num_key_value_heads,
        headDim: config.head_dim,
        pageSize: 16,
      }),
      queryHeads: config.num_attention_heads,
    });
    const before = tf.memory().numTensors;
    const first = lastLogits(model.prefill([cache], [ids]));
    expect(maxAbsDiff(first, reference[ids.length - 1]!)).toBeLessThan(1e-4);
    next.forEach((token, i) => {
      const row = lastLogits(model.decodeStep([cache], Int32Array.of(token)));
      expect(maxAbsDiff(row, reference[ids.length + i]!)).toBeLessThan(1e-4);
    });
    expect(tf.memory().numTensors).toBe(before);
    expect(cache.length(0)).toBe(all.length);
    model.dispose();
  });
});

describe('readModelDirectory on Hugging Face directories', () => {
  it('reads chat_template.jinja over the config’s template, and requires one when asked', async () => {
    const jinja = await changed('tiny-qwen2', 'jinja', (d) =>
      writeFile(join(d, 'chat_template.jinja'), '{{ messages[0].content }}{{ eos_token }}'),
    );
    const loaded = await readModelDirectory(jinja, { chatTemplate: 'required' });
    expect(loaded.chatTemplate!.source).toBe(join(jinja, 'chat_template.jinja'));
    expect(loaded.chatTemplate!.render([{ role: 'user', content: 'x' }])).toBe('x<|im_end|>');
    loaded.model.dispose();

    const none = await changed('tiny-qwen2', 'no-template', async (d) => {
      const config = JSON.parse(await readFile(join(d, 'tokenizer_config.json'), 'utf8'));
      delete config.chat_template;
      await writeFile(join(d, 'tokenizer_config.json'), JSON.stringify(config));
    });
    const optional = await readModelDirectory(none);
    expect(optional.chatTemplate).toBeUndefined();
    optional.model.dispose();
    const error = await expectLetheRejection(
      readModelDirectory(none, { chatTemplate: 'required' }),
    );
    expect([error.code, error.argument]).toEqual([
      'E_CHECKPOINT',
      join(none, 'tokenizer_config.json'),
    ]);
    expect(error.message).toMatch(/has no chat_template/);

    const noConfig = await changed('tiny-qwen2', 'no-config', (d) =>
      rm(join(d, 'tokenizer_config.json')),
    );
    const missing = await expectLetheRejection(
      readModelDirectory(noConfig, { chatTemplate: 'required' }),
    );
    expect([missing.code, missing.argument]).toEqual([
      'E_CHECKPOINT',
      join(noConfig, 'tokenizer_config.json'),
    ]);
  });

  it('names a template that does not parse', async () => {
    const broken = await changed('tiny-llama', 'broken-template', (d) =>
      writeFile(join(d, 'chat_template.jinja'), '{% if %}'),
    );
    const error = await expectLetheRejection(readModelDirectory(broken));
    expect([error.code, error.argument]).toEqual(['E_FORMAT', join(broken, 'chat_template.jinja')]);
  });

  it('names the index for a missing shard or a shard outside the directory', async () => {
    const shard = 'model-00002-of-00002.safetensors';
    const missing = await changed('tiny-llama', 'missing-shard', (d) => rm(join(d, shard)));
    const error = await expectLetheRejection(readModelDirectory(missing));
    expect([error.code, error.argument]).toEqual([
      'E_CHECKPOINT',
      join(missing, 'model.safetensors.index.json'),
    ]);
    expect(error.message).toContain(`${join(missing, shard)}: is named by`);

    const escaping = await changed('tiny-llama', 'escaping', async (d) => {
      const path = join(d, 'model.safetensors.index.json');
      const index = JSON.parse(await readFile(path, 'utf8'));
      index.weight_map['model.norm.weight'] = `../missing-shard/${shard}`;
      await writeFile(path, JSON.stringify(index));
    });
    const outside = await expectLetheRejection(readModelDirectory(escaping));
    expect([outside.code, outside.argument]).toEqual([
      'E_FORMAT',
      join(escaping, 'model.safetensors.index.json'),
    ]);
  });

  it('names generation_config.json when its EOS ids are not token ids', async () => {
    const bad = await changed('tiny-qwen2', 'bad-eos', (d) =>
      writeFile(join(d, 'generation_config.json'), '{"eos_token_id": [1, 100000]}'),
    );
    const error = await expectLetheRejection(readModelDirectory(bad));
    expect([error.code, error.argument]).toEqual(['E_FORMAT', join(bad, 'generation_config.json')]);
    const noGeneration = await changed('tiny-qwen2', 'no-generation', (d) =>
      rm(join(d, 'generation_config.json')),
    );
    const loaded = await readModelDirectory(noGeneration);
    // config.json's eos_token_id (<|im_end|>), which is also the tokenizer's EOS.
    expect(loaded.eosTokenIds).toEqual([(loaded.tokenizer as HfTokenizer).eosId]);
    loaded.model.dispose();
  });

  it('is not a task model: loadTaskModel refuses a Hugging Face tokenizer', async () => {
    // The tokenizer is checked before the manifest's model size is compared with config.json.
    const task = await changed('tiny-qwen2', 'as-task', (d) =>
      cp(join(ROOT, 'models', 'lm', TASK_MODEL_FILE), join(d, TASK_MODEL_FILE)),
    );
    const error = await expectLetheRejection(loadTaskModel(task));
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', join(task, 'tokenizer.json')]);
    expect(error.message).toMatch(/is not a character tokenizer/);
  });
});

describe('readModelDirectory on a task model', () => {
  it('still reads its character tokenizer, without a chat template', async () => {
    const loaded = await readModelDirectory(join(ROOT, 'models', 'lm'));
    expect(loaded.tokenizer).toBeInstanceOf(CharTokenizer);
    expect(loaded.chatTemplate).toBeUndefined();
    expect(loaded.eosTokenIds).toEqual([2]);
    loaded.model.dispose();
  });
});
