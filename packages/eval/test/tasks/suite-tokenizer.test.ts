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

  it('encodes every member’s prompts and targets in fewer tokens than characters, and back exactly', () => {
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
          if (member !== 'countdown-verbose') {
            expect(tokenizer.encode(example.prompt).length).toBeLessThan(example.prompt.length / 2);
          }
        },
      ),
      { numRuns: 60 },
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
