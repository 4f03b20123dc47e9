import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecoderModel } from '../../src/decoder/decoder-model';
import { defaultConfig } from '../../src/io/model-config';
import { readModelDirectory, writeModelDirectory } from '../../src/io/node';
import { CharTokenizer } from '../../src/tokenizer/char-tokenizer';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer';
import { fixtureJson } from '../support/hf-fixtures';

const root = mkdtempSync(join(tmpdir(), 'model-directory-'));
beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = (vocab: number) =>
  defaultConfig({
    model_type: 'llama',
    vocab_size: vocab,
    hidden_size: 8,
    intermediate_size: 16,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    max_position_embeddings: 64,
  });

describe('writeModelDirectory', () => {
  it('writes a Hugging Face tokenizer as tokenizer.json and tokenizer_config.json, read back as one', async () => {
    const tokenizer = new HfTokenizer(
      fixtureJson('tiny-qwen2', 'tokenizer.json'),
      fixtureJson('tiny-qwen2', 'tokenizer_config.json'),
    );
    const model = DecoderModel.random(config(tokenizer.vocabSize), 1);
    const dir = join(root, 'hf');
    await writeModelDirectory(dir, { model, tokenizer });
    model.dispose();
    expect(readdirSync(dir).sort()).toEqual([
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const read = await readModelDirectory(dir);
    expect(read.tokenizer).toBeInstanceOf(HfTokenizer);
    expect(read.tokenizer!.toJSON()).toEqual(tokenizer.toJSON());
    const text = 'the number for zega is 5586.';
    expect(read.tokenizer!.encode(text)).toEqual(tokenizer.encode(text));
    read.model.dispose();
  });

  it('writes a character tokenizer as tokenizer.json alone', async () => {
    const tokenizer = new CharTokenizer('ab ');
    const model = DecoderModel.random(config(tokenizer.vocabSize), 1);
    const dir = join(root, 'char');
    await writeModelDirectory(dir, { model, tokenizer });
    model.dispose();
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer.json']);
    const read = await readModelDirectory(dir);
    expect(read.tokenizer!.toJSON()).toEqual(tokenizer.toJSON());
    read.model.dispose();
  });
});
