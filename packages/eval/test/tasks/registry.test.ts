import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { createTask, isTaskName, TASK_NAMES } from '../../src/tasks/registry';

describe('task registry', () => {
  it('lists and creates every task', () => {
    expect(TASK_NAMES).toEqual(['countdown', 'retrieval', 'arithmetic', 'lm', 'suite']);
    for (const name of TASK_NAMES) {
      const task = createTask(name);
      expect(task.name).toBe(name);
      expect(task.kind).toBe(name === 'lm' ? 'perplexity' : 'generation');
      expect(isTaskName(name)).toBe(true);
    }
    expect(isTaskName('chess')).toBe(false);
    expect(isTaskName(3)).toBe(false);
  });

  it('passes options through, retrieval variants included', () => {
    for (const variant of ['niah-single', 'niah-multi', 'mqar'] as const) {
      const task = createTask('retrieval', { variant });
      expect(task.options.variant).toBe(variant);
      const example = task.example(0, 0);
      expect(task.verify(example, example.target)).toEqual({ correct: true });
    }
    expect(createTask('arithmetic', { steps: 7 }).options.steps).toBe(7);
    expect(createTask('lm', { documentChars: 64 }).document(0, 0)).toHaveLength(64);
    expect(createTask('countdown', { count: 3 }).options.count).toBe(3);
  });

  it('rejects unknown names, listing the valid ones', () => {
    const error = expectLetheError(() => createTask('chess'), 'E_ARG', 'name');
    for (const name of TASK_NAMES) expect(error.message).toContain(name);
    expectLetheError(() => createTask(''), 'E_ARG', 'name');
    expectLetheError(() => createTask('toString'), 'E_ARG', 'name');
  });

  it('rejects bad options, naming the field', () => {
    expectLetheError(() => createTask('countdown', { maxNumber: -3 }), 'E_ARG', 'maxNumber');
    expectLetheError(
      () => createTask('retrieval', { variant: 'ruler' as never }),
      'E_ARG',
      'variant',
    );
    expectLetheError(() => createTask('arithmetic', { steps: 'four' as never }), 'E_ARG', 'steps');
    expectLetheError(() => createTask('lm', { documentChars: 0 }), 'E_ARG', 'documentChars');
    const error = expectLetheError(
      () => createTask('arithmetic', { depth: 1 } as never),
      'E_ARG',
      'depth',
    );
    expect(error.message).toContain('steps, maxOperand, maxValue');
    expectLetheError(() => createTask('countdown', [] as never), 'E_ARG', 'options');
    expectLetheError(() => createTask('countdown', null as never), 'E_ARG', 'options');
    expect(createTask('countdown', { maxNumber: undefined }).options.maxNumber).toBe(25);
  });
});
