import { createTask, type GenerationTask } from '@lethe/eval';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { parseTaskOptionsFlag } from '../src/task-option-flag';
import { taskVariant } from '../src/task-variant';

describe('taskVariant', () => {
  const mixture = createTask('suite', {
    member: 'retrieval-mixture',
    contextChars: 4096,
    minContextChars: 256,
  });

  it('is the task itself without options', () => {
    expect(taskVariant(mixture, undefined, 'taskOptions')).toBe(mixture);
  });

  it('puts the options over the task’s own: the examples of that task', () => {
    const variant = taskVariant(
      mixture,
      { member: 'niah-multi', contextChars: 1024 },
      'taskOptions',
    );
    const direct = createTask('suite', {
      member: 'niah-multi',
      contextChars: 1024,
      minContextChars: 256,
    });
    expect(variant.name).toBe('suite');
    expect(variant.options).toEqual(direct.options);
    const example = (task: unknown) => (task as GenerationTask).example(0, 3);
    expect(example(variant)).toEqual(example(direct));
    expect(example(variant)).not.toEqual(example(mixture));
  });

  it('refuses an option the task refuses, naming the argument', () => {
    const error = expectLetheError(
      () => taskVariant(mixture, { member: 'no-such-member' }, 'taskOptions'),
      'E_ARG',
      'taskOptions',
    );
    expect(error.message).toContain('no-such-member');
  });
});

describe('parseTaskOptionsFlag', () => {
  it('reads a JSON object', () => {
    expect(parseTaskOptionsFlag('{"member":"niah-multi","contextChars":1024}')).toEqual({
      member: 'niah-multi',
      contextChars: 1024,
    });
  });

  it.each(['member=niah-multi', '[1]', 'null', '"text"', '{'])(
    'refuses %s naming --task-options',
    (text) => {
      expectLetheError(() => parseTaskOptionsFlag(text), 'E_ARG', '--task-options');
    },
  );

  it('names the flag it is given', () => {
    expectLetheError(() => parseTaskOptionsFlag('[1]', '--extra-task'), 'E_ARG', '--extra-task');
  });
});
