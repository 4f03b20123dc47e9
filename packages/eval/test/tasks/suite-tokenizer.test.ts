import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSuiteTokenizerJson } from '../../scripts/suite-tokenizer-build';
import { createTask } from '../../src/tasks/registry';
import { SUITE_MEMBERS } from '../../src/tasks/suite';
import { suiteBpeTokenizer } from '../../src/tasks/suite-tokenizer';
import { checkTaskTokenizer } from '../../src/tasks/task-tokenizer-check';
import { taskTokenizer } from '../../src/tasks/tokenizers';

describe('suiteBpeTokenizer', () => {
  const tokenizer = suiteBpeTokenizer();

  it('is the one its recipe learns, byte for byte', () => {
    const committed = readFileSync(join(__dirname, '../../src/tasks/suite-tokenizer.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(buildSuiteTokenizerJson())}\n`);
  });

  it('is the suite family’s tokenizer', () => {
    expect(taskTokenizer('suite').toJSON()).toEqual(tokenizer.toJSON());
  });

  it('has the special tokens after the 768 BPE tokens, and one id per digit', () => {
    expect(tokenizer.vocabSize).toBe(771);
    expect([tokenizer.padId, tokenizer.bosId, tokenizer.eosId]).toEqual([768, 769, 770]);
    expect(tokenizer.encode('answer: 6309.').length).toBeGreaterThanOrEqual(4 + 1);
    expect(Array.from(tokenizer.encode('6309'))).toHaveLength(4);
  });

  it('encodes every member’s prompts and targets in no more tokens than characters, and back exactly', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SUITE_MEMBERS),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom(256, 1024),
        (member, index, contextChars) => {
          const example = createTask('suite', { member, contextChars }).example(0, index);
          for (const text of [example.prompt, example.target]) {
            const ids = tokenizer.encode(text);
            expect(tokenizer.decode(ids)).toBe(text);
            expect(ids.length).toBeLessThanOrEqual(text.length);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  // One prompt can be dense: a frequent-words draw of rare words reaches 0.54 tokens a
  // character. The compression the context budget relies on is the members' typical one.
  it('encodes the retrieval members’ prompts in under half as many tokens as characters, on average over 16', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SUITE_MEMBERS.filter((member) => member !== 'countdown-verbose')),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom(256, 1024),
        (member, start, contextChars) => {
          const task = createTask('suite', { member, contextChars });
          let tokens = 0;
          let chars = 0;
          for (let index = start; index < start + 16; index++) {
            const prompt = task.example(0, index).prompt;
            tokens += tokenizer.encode(prompt).length;
            chars += prompt.length;
          }
          expect(tokens).toBeLessThan(chars / 2);
        },
      ),
      { numRuns: 20 },
    );
  });
});

describe('checkTaskTokenizer', () => {
  const suite = createTask('suite', { contextChars: 256 });
  const countdown = createTask('countdown');

  it('accepts each task’s own tokenizer', () => {
    checkTaskTokenizer(suiteBpeTokenizer(), suite, 'tokenizer.json');
    checkTaskTokenizer(taskTokenizer('countdown'), countdown, 'tokenizer.json');
  });

  it('refuses another tokenizer, naming the file', () => {
    expectLetheError(
      () => checkTaskTokenizer(taskTokenizer('retrieval'), suite, 'm/tokenizer.json'),
      'E_CHECKPOINT',
      'm/tokenizer.json',
    );
    expectLetheError(
      () => checkTaskTokenizer(suiteBpeTokenizer(), countdown, 'm/tokenizer.json'),
      'E_CHECKPOINT',
      'm/tokenizer.json',
    );
    expectLetheError(
      () => checkTaskTokenizer(taskTokenizer('retrieval'), countdown, 'm/tokenizer.json'),
      'E_CHECKPOINT',
      'm/tokenizer.json',
    );
  });
});
