import { describe, expect, it } from 'vitest';
import { bareMessage, inFile, LetheError, unreadableFile, withArgument } from '../src/index';

describe('errors re-issued about another argument or a file', () => {
  it('strips the prefix the constructor adds, and re-issues with the same code', () => {
    const error = new LetheError('E_ARG', 'must be ≥ 1, got 0', 'hidden_size');
    expect(bareMessage(error)).toBe('must be ≥ 1, got 0');
    expect(bareMessage(new LetheError('E_SHAPE', 'too short'))).toBe('too short');
    const moved = withArgument(error, '--hidden');
    expect([moved.code, moved.argument, moved.message]).toEqual([
      'E_ARG',
      '--hidden',
      '[E_ARG] --hidden: must be ≥ 1, got 0',
    ]);
  });

  it('names the file a content error is about, keeping the field in the message', () => {
    const error = new LetheError('E_ARG', 'must be ≥ 1, got 0', 'hidden_size');
    const about = inFile('run/config.json', error);
    expect([about.code, about.argument, about.message]).toEqual([
      'E_ARG',
      'run/config.json',
      '[E_ARG] run/config.json: hidden_size: must be ≥ 1, got 0',
    ]);
    expect(inFile('run/config.json', about)).toBe(about);
    const plain = inFile('x.json', new SyntaxError('Unexpected token'));
    expect([plain.code, plain.message]).toEqual([
      'E_FORMAT',
      '[E_FORMAT] x.json: Unexpected token',
    ]);
  });

  it('says why a file cannot be read, from the error code when there is one', () => {
    const missing = Object.assign(new Error('ENOENT: open'), { code: 'ENOENT' });
    expect(unreadableFile('a/b.json', missing).message).toBe(
      '[E_CHECKPOINT] a/b.json: cannot be read: no such file or directory (ENOENT)',
    );
    expect(
      unreadableFile('b', Object.assign(new Error('x'), { code: 'EISDIR' }), 'E_ARG').message,
    ).toBe('[E_ARG] b: cannot be read: is a directory, expected a file (EISDIR)');
    expect(unreadableFile('c', new Error('HTTP 500')).message).toBe(
      '[E_CHECKPOINT] c: cannot be read: HTTP 500',
    );
    const coded = new LetheError('E_FORMAT', 'bad');
    expect(unreadableFile('d', coded)).toBe(coded);
  });
});
