import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { createTask, encodePrompt, encodeText } from '../../src/index';

describe('encodePrompt', () => {
  const { tokenizer } = createTask('retrieval', {});

  it('encodes a prompt of known characters as encodeText does', () => {
    const text = 'key 12?\n';
    expect(Array.from(encodePrompt(tokenizer, text, '--prompt'))).toEqual(
      Array.from(encodeText(tokenizer, text)),
    );
  });

  it('refuses a character outside the alphabet, naming it and the argument', () => {
    const error = expectLetheError(
      () => encodePrompt(tokenizer, 'ab€c', 'prompt'),
      'E_ARG',
      'prompt',
    );
    expect(error.message).toContain('character "€" is not in the model\'s alphabet');
  });
});
