import { describe, expect, it } from 'vitest';
import { finalAnswer, formatAnswer } from '../../src/tasks/answer';

describe('final answer extraction', () => {
  it('reads the last line before the stop', () => {
    expect(formatAnswer('42')).toBe('answer: 42.');
    expect(finalAnswer('answer: 42.')).toEqual({ ok: true, text: '42' });
    expect(finalAnswer('work\nmore work\nanswer:42')).toEqual({ ok: true, text: '42' });
    expect(finalAnswer('answer: 42\n\n  \n')).toEqual({ ok: true, text: '42' });
    expect(finalAnswer('answer: 1.\nanswer: 2.')).toEqual({ ok: true, text: '1' });
    expect(finalAnswer('answer: 1;answer: 2;', ';')).toEqual({ ok: true, text: '1' });
  });

  it('explains what is missing', () => {
    expect(finalAnswer('')).toEqual({ ok: false, reason: 'malformed: empty completion' });
    expect(finalAnswer('.answer: 4')).toEqual({ ok: false, reason: 'malformed: empty completion' });
    expect(finalAnswer('answer: 4\nbut then')).toEqual({
      ok: false,
      reason: 'malformed: the last line is not an "answer:" line',
    });
    expect(finalAnswer('answer:   .')).toEqual({ ok: false, reason: 'malformed: empty answer' });
    expect(finalAnswer(undefined)).toEqual({
      ok: false,
      reason: 'malformed: completion is a undefined, not a string',
    });
  });
});
