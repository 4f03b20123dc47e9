import { fileURLToPath } from 'node:url';
import type { GenerationTask } from '@lethe/eval';
import { loadTaskModel } from '@lethe/eval/node';
import { CharTokenizer } from '@lethe/model';
import { withEvictionRateTag } from '@lethe/policies-ngc';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { countdownNgcTask } from '../src/countdown-ngc-task';
import { interoceptionTokenizer, TagMarkupTokenizer } from '../src/interoception-tokenizer';

const MODEL = fileURLToPath(new URL('../../../models/countdown', import.meta.url));
let task: GenerationTask;
let base: CharTokenizer;

beforeAll(async () => {
  await initBackend('wasm');
  const loaded = await loadTaskModel(MODEL);
  loaded.model.dispose();
  task = loaded.task as GenerationTask;
  base = loaded.tokenizer;
});

describe('interoceptionTokenizer', () => {
  it('costs the tag one token per character, or five with markup tokens', () => {
    const prompt = task.example(0, 0).prompt;
    const tagged = withEvictionRateTag(prompt, 0.5);
    const characters = interoceptionTokenizer(base, 'characters');
    const markup = interoceptionTokenizer(base, 'markup');
    expect(markup).toBeInstanceOf(TagMarkupTokenizer);
    expect(characters.encode(tagged).length - prompt.length).toBe(
      '<eviction_rate>50%</eviction_rate>'.length,
    );
    expect(markup.encode(tagged).length - prompt.length).toBe(5);
    // Old ids keep their meaning; decoding gives the tag back.
    expect(Array.from(markup.encode(prompt))).toEqual(Array.from(base.encode(prompt)));
    expect(markup.decode(markup.encode(tagged))).toBe(tagged);
    expect(markup.vocabSize).toBeLessThan(characters.vocabSize);
  });

  it('rebuilds the same tokenizer from its saved alphabet', () => {
    const markup = interoceptionTokenizer(base, 'markup');
    const saved = CharTokenizer.fromJSON(JSON.parse(JSON.stringify(markup)));
    const rebuilt = interoceptionTokenizer(saved, 'markup');
    const text = withEvictionRateTag(task.example(0, 1).prompt, 0.3);
    expect(rebuilt.vocabSize).toBe(markup.vocabSize);
    expect(Array.from(rebuilt.encode(text))).toEqual(Array.from(markup.encode(text)));
  });

  it('tags training prompts with the markup tokens', () => {
    const markup = interoceptionTokenizer(base, 'markup');
    const ngcTask = countdownNgcTask(task, 0, 8, markup);
    const example = ngcTask.example(0, 0);
    const ids = ngcTask.prompt(example, 0.25);
    expect(markup.decode(ids, { skipSpecialTokens: true })).toBe(
      `${example.prompt}<eviction_rate>25%</eviction_rate>`,
    );
  });
});
