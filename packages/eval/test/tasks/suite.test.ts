import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countdownTask, VERBOSE_COUNTDOWN } from '../../src/tasks/countdown';
import { createTask } from '../../src/tasks/registry';
import { retrievalTask } from '../../src/tasks/retrieval';
import {
  SUITE_COUNTDOWN_MAX_TRACE_CHARS,
  SUITE_COUNTDOWN_MAX_VALUE,
  SUITE_MEMBERS,
  SUITE_MIN_CONTEXT_CHARS,
  SUITE_RETRIEVAL_MEMBERS,
  SUITE_SOLO_WARMUP_MEMBERS,
  SUITE_WARMUP_MEMBERS,
  type SuiteData,
} from '../../src/tasks/suite';
import { suiteBpeTokenizer } from '../../src/tasks/suite-tokenizer';
import { indexArb, seedArb } from './helpers';

describe('the long-context suite task', () => {
  it('poses each member with the member task’s own examples', () => {
    const twoHop = createTask('suite', { member: 'two-hop', contextChars: 512 });
    const plain = retrievalTask({
      variant: 'two-hop',
      contextChars: 512,
      chains: 2,
      route: 'written',
    });
    const countdown = createTask('suite', { member: 'countdown-verbose' });
    const plainCountdown = countdownTask({
      ...VERBOSE_COUNTDOWN,
      maxTraceChars: SUITE_COUNTDOWN_MAX_TRACE_CHARS,
      maxValue: SUITE_COUNTDOWN_MAX_VALUE,
      goal: 'checked',
    });
    const tracking = createTask('suite', { member: 'variable-tracking', contextChars: 512 });
    const plainTracking = retrievalTask({
      variant: 'variable-tracking',
      contextChars: 512,
      chains: 2,
      hops: 3,
      query: 'value',
    });
    expect(SUITE_COUNTDOWN_MAX_VALUE).toBe(100);
    for (const index of [0, 5, 17]) {
      const chain = tracking.example(3, index);
      expect([chain.prompt, chain.target]).toEqual([
        plainTracking.example(3, index).prompt,
        plainTracking.example(3, index).target,
      ]);
      expect(chain.target).toMatch(/^via [a-z]{4} [a-z]{4} [a-z]{4}\nanswer: \d{5}\.$/);
      const example = twoHop.example(3, index);
      const reference = plain.example(3, index);
      expect(example).toMatchObject({ task: 'suite', seed: 3, index, prompt: reference.prompt });
      expect(example.target).toBe(reference.target);
      expect(example.target).toMatch(/^via [a-z]{4}\nanswer: \d{4}\.$/);
      expect(example.data).toEqual({ ...reference.data, member: 'two-hop' });
      const search = countdown.example(3, index);
      expect(search.target).toBe(plainCountdown.example(3, index).target);
      expect(search.target).toContain(`;${(search.data as { target: number }).target}:`);
      const restated = createTask('suite', {
        member: 'countdown-verbose',
        countdownGoal: 'restated',
      }).example(3, index);
      expect(restated.target).toBe(
        countdownTask({ ...plainCountdown.options, goal: 'restated' }).example(3, index).target,
      );
    }
  });

  it('cycles through the members in the mixture, balanced in every prefix', () => {
    const mixture = createTask('suite', { contextChars: 256 });
    expect(mixture.options).toEqual({
      member: 'mixture',
      contextChars: 256,
      minContextChars: 256,
      countdownGoal: 'checked',
    });
    const members = Array.from(
      { length: 12 },
      (_, i) => (mixture.example(0, i).data as SuiteData).member,
    );
    expect(members).toEqual([...SUITE_MEMBERS, ...SUITE_MEMBERS]);
    const single = createTask('suite', { member: 'frequent-words', contextChars: 256 });
    expect(mixture.example(0, 9).target).toBe(single.example(0, 1).target);
    const rulers = retrievalTask({ variant: 'frequent-words', contextChars: 256, alpha: 2 });
    expect(single.example(0, 1).prompt).toBe(rulers.example(0, 1).prompt);
    expect((single.example(0, 1).data as { counts: number[] }).counts).toEqual([35, 9, 4, 2]);
    expect(mixture.maxNewTokens).toBe(SUITE_COUNTDOWN_MAX_TRACE_CHARS);
  });

  it('cycles through the retrieval members only in the retrieval mixture', () => {
    const mixture = createTask('suite', { member: 'retrieval-mixture', contextChars: 256 });
    const members = Array.from(
      { length: 10 },
      (_, i) => (mixture.example(0, i).data as SuiteData).member,
    );
    expect(members).toEqual([...SUITE_RETRIEVAL_MEMBERS, ...SUITE_RETRIEVAL_MEMBERS]);
    expect(SUITE_RETRIEVAL_MEMBERS).toEqual(SUITE_MEMBERS.filter((m) => m !== 'countdown-verbose'));
    const single = createTask('suite', { member: 'two-hop', contextChars: 256 });
    expect(mixture.example(0, 9).target).toBe(single.example(0, 1).target);
    expect(mixture.verify(mixture.example(0, 9), single.example(0, 1).target)).toEqual({
      correct: true,
    });
    // its longest answer is a retrieval member's, far below verbose Countdown's
    expect(mixture.maxNewTokens).toBeLessThan(SUITE_COUNTDOWN_MAX_TRACE_CHARS / 4);
    const countdown = createTask('suite', { member: 'countdown-verbose', contextChars: 256 });
    expect(mixture.verify(countdown.example(0, 0), countdown.example(0, 0).target).correct).toBe(
      false,
    );
  });

  it('poses selections joined by “+” as one list of members in turn, a repeated member with its own examples', () => {
    const sum = createTask('suite', {
      member: 'retrieval-mixture+warmup/copy+two-hop' as never,
      contextChars: 256,
    });
    expect(sum.options.member).toBe('retrieval-mixture+warmup/copy+two-hop');
    const order = [...SUITE_RETRIEVAL_MEMBERS, 'warmup/copy', 'two-hop'];
    const members = Array.from(
      { length: 14 },
      (_, i) => (sum.example(0, i).data as SuiteData).member,
    );
    expect(members).toEqual([...order, ...order]);
    const twoHop = createTask('suite', { member: 'two-hop', contextChars: 256 });
    const copy = createTask('suite', { member: 'warmup/copy', contextChars: 256 });
    // two-hop's two slots of round r take its examples 2r and 2r + 1; the copy drill's, r.
    expect([4, 6, 11, 13].map((i) => sum.example(0, i).prompt)).toEqual(
      [0, 1, 2, 3].map((i) => twoHop.example(0, i).prompt),
    );
    expect(sum.example(0, 12).target).toBe(copy.example(0, 1).target);
    for (const i of [0, 5, 6, 13]) {
      const example = sum.example(0, i);
      expect(sum.verify(example, example.target)).toEqual({ correct: true });
    }
    // A sum's shortest context is the suite's unless every part is a warm-up.
    expectLetheError(
      () => createTask('suite', { member: 'warmup/copy+two-hop' as never, contextChars: 128 }),
      'E_ARG',
      'contextChars',
    );
    const drills = createTask('suite', {
      member: 'warmup/copy+warmup/repeat' as never,
      contextChars: 64,
    });
    expect(drills.verify(drills.example(0, 1), drills.example(0, 1).target)).toEqual({
      correct: true,
    });
    for (const bad of ['two-hop+', 'two-hop+retrieval', '+two-hop']) {
      expectLetheError(
        () => createTask('suite', { member: bad as never, contextChars: 256 }),
        'E_ARG',
        'member',
      );
    }
  });

  it('poses the warm-up members in turn: each retrieval member at its easiest, the copy drill and the recitation drills, under the suite’s BPE', () => {
    const warmup = createTask('suite', { member: 'warmup-mixture', contextChars: 256 });
    const members = Array.from(
      { length: 16 },
      (_, i) => (warmup.example(0, i).data as SuiteData).member,
    );
    expect(members).toEqual([...SUITE_WARMUP_MEMBERS, ...SUITE_WARMUP_MEMBERS]);
    const easiest = [
      retrievalTask({ variant: 'niah-single', contextChars: 256, valueDigits: 4 }),
      retrievalTask({ variant: 'niah-multivalue', contextChars: 256, keys: 1, values: 2 }),
      retrievalTask({ variant: 'variable-tracking', contextChars: 256, chains: 1, hops: 1 }),
      retrievalTask({ variant: 'frequent-words', contextChars: 256, top: 1 }),
      retrievalTask({ variant: 'two-hop', contextChars: 256, chains: 1 }),
      retrievalTask({ variant: 'copy', contextChars: 256 }),
      retrievalTask({ variant: 'recitation', contextChars: 256, valueDigits: 4, order: 'same' }),
      retrievalTask({ variant: 'recitation', contextChars: 256, valueDigits: 4 }),
    ];
    const bpe = suiteBpeTokenizer();
    for (let i = 0; i < 16; i++) {
      const example = warmup.example(4, i);
      const reference = easiest[i % 8]!.example(4, Math.floor(i / 8));
      expect([example.prompt, example.target]).toEqual([reference.prompt, reference.target]);
      expect(warmup.verify(example, example.target)).toEqual({ correct: true });
      expect(warmup.verify(example, 'answer: 0.').correct).toBe(false);
      expect(bpe.decode(bpe.encode(example.prompt))).toBe(example.prompt);
      // Each warm-up member can be posed alone, with the same examples.
      const member = SUITE_WARMUP_MEMBERS[i % 8]!;
      const alone = createTask('suite', { member, contextChars: 256 });
      const own = alone.example(4, Math.floor(i / 8));
      expect([own.prompt, own.target]).toEqual([reference.prompt, reference.target]);
      expect((own.data as SuiteData).member).toBe(member);
      expect(alone.verify(own, own.target)).toEqual({ correct: true });
    }
    expect(warmup.tokenizer.toJSON()).toEqual(bpe.toJSON());
    // A warm-up example is not a suite member's, nor the other way round.
    const suite = createTask('suite', { member: 'retrieval-mixture', contextChars: 256 });
    expect(suite.verify(warmup.example(0, 0), warmup.example(0, 0).target).correct).toBe(false);
    expect(warmup.verify(suite.example(0, 0), suite.example(0, 0).target).correct).toBe(false);
  });

  it('poses the lookup drill alone, outside the warm-up mixture, at warm-up lengths', () => {
    expect(SUITE_SOLO_WARMUP_MEMBERS).toEqual([
      'warmup/lookup',
      'warmup/variable-lookup',
      'warmup/chain-lookup',
      'warmup/possessive-lookup',
    ]);
    const lookup = createTask('suite', { member: 'warmup/lookup', contextChars: 64 });
    const reference = retrievalTask({
      variant: 'recitation',
      contextChars: 64,
      valueDigits: 4,
      order: 'sampled',
    });
    for (let i = 0; i < 8; i++) {
      const example = lookup.example(5, i);
      const own = reference.example(5, i);
      expect([example.prompt, example.target]).toEqual([own.prompt, own.target]);
      expect((example.data as SuiteData).member).toBe('warmup/lookup');
      expect(lookup.verify(example, example.target)).toEqual({ correct: true });
    }
    const mixture = createTask('suite', { member: 'warmup-mixture', contextChars: 256 });
    const posed = Array.from(
      { length: 64 },
      (_, i) => (mixture.example(0, i).data as SuiteData).member,
    );
    expect(posed).not.toContain('warmup/lookup');
    expect(posed).not.toContain('warmup/variable-lookup');
    expect(posed).not.toContain('warmup/chain-lookup');
    expect(posed).not.toContain('warmup/possessive-lookup');
  });

  it('poses two-hop’s lookups as drills alone: the sampled recitation over chains, links of either wording', () => {
    for (const [member, link] of [
      ['warmup/chain-lookup', 'number'],
      ['warmup/possessive-lookup', 'possessive'],
    ] as const) {
      const drill = createTask('suite', { member, contextChars: 512 });
      const reference = retrievalTask({
        variant: 'recitation',
        contextChars: 512,
        valueDigits: 4,
        order: 'sampled',
        form: 'chains',
        link,
      });
      expect(drill.maxNewTokens).toBe(reference.maxNewTokens);
      for (let i = 0; i < 4; i++) {
        const example = drill.example(5, i);
        const own = reference.example(5, i);
        expect([example.prompt, example.target]).toEqual([own.prompt, own.target]);
        expect(example.target).toMatch(/^via [a-z]{4}\nanswer: \d{4}\.$/);
        expect(drill.verify(example, example.target)).toEqual({ correct: true });
      }
    }
    // Two chains need 145 characters, also at the shortest of a spread of lengths.
    expectLetheError(
      () =>
        createTask('suite', {
          member: 'warmup/chain-lookup',
          contextChars: 512,
          minContextChars: 144,
        }),
      'E_ARG',
      'minContextChars',
    );
  });

  it('poses variable tracking’s lookups as a drill alone: 8 chains of 3 hops, no filler, 6 answered', () => {
    const drill = createTask('suite', { member: 'warmup/variable-lookup', contextChars: 1024 });
    const reference = retrievalTask({
      variant: 'variable-tracking',
      contextChars: 1024,
      chains: 8,
      hops: 3,
      haystack: 'none',
      recited: 6,
    });
    for (let i = 0; i < 4; i++) {
      const example = drill.example(5, i);
      const own = reference.example(5, i);
      expect([example.prompt, example.target]).toEqual([own.prompt, own.target]);
      expect(example.prompt.split('\n')).toHaveLength(15);
      expect(drill.verify(example, example.target)).toEqual({ correct: true });
    }
    // The assignments alone need 583 characters; a shorter context is refused by name.
    expectLetheError(
      () => createTask('suite', { member: 'warmup/variable-lookup', contextChars: 582 }),
      'E_ARG',
      'contextChars',
    );
    createTask('suite', { member: 'warmup/variable-lookup', contextChars: 583 });
  });

  it('spreads the context lengths over [minContextChars, contextChars], each example the member task’s own at its length', () => {
    const spread = createTask('suite', {
      member: 'warmup-mixture',
      contextChars: 104,
      minContextChars: 72,
    });
    expect(spread.options).toEqual({
      member: 'warmup-mixture',
      contextChars: 104,
      minContextChars: 72,
      countdownGoal: 'checked',
    });
    const lengths = new Set<number>();
    for (let i = 0; i < 48; i++) {
      const example = spread.example(2, i);
      const member = (example.data as SuiteData).member;
      // Some length in the range gives the member task's own example, word for word.
      const length = [...Array(33).keys()]
        .map((k) => 72 + k)
        .find((chars) => {
          const alone = createTask('suite', { member, contextChars: chars });
          return alone.example(2, Math.floor(i / 8)).prompt === example.prompt;
        });
      expect(length).toBeDefined();
      lengths.add(length!);
      expect(spread.example(2, i)).toEqual(example);
      expect(spread.verify(example, example.target)).toEqual({ correct: true });
      expect(spread.verify(example, 'answer: 0.').correct).toBe(false);
    }
    expect(lengths.size).toBeGreaterThan(10);
    expect(Math.min(...lengths)).toBeLessThan(80);
    expect(Math.max(...lengths)).toBeGreaterThan(96);
    // Without a spread every example is at contextChars, as before.
    const fixed = createTask('suite', {
      member: 'two-hop',
      contextChars: 512,
      minContextChars: 512,
    });
    expect(fixed.example(1, 3)).toEqual(
      createTask('suite', { member: 'two-hop', contextChars: 512 }).example(1, 3),
    );
  });

  it('verifies every member’s reference and rejects a wrong answer (property)', () => {
    const tasks = [
      createTask('suite', { contextChars: SUITE_MIN_CONTEXT_CHARS }),
      ...SUITE_MEMBERS.map((member) => createTask('suite', { member, contextChars: 640 })),
    ];
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        for (const task of tasks) {
          const example = task.example(seed, index);
          expect(task.verify(example, example.target)).toEqual({ correct: true });
          expect(task.verify(example, 'answer: 0.').correct).toBe(false);
          for (const text of [example.prompt, example.target]) {
            const ids = task.tokenizer.encode(text);
            expect(task.tokenizer.decode(ids)).toBe(text);
          }
          expect(task.tokenizer.encode(example.target).length).toBeLessThanOrEqual(
            task.maxNewTokens,
          );
        }
      }),
      { numRuns: 12 },
    );
  });

  it('reads every member, and the mixture, with the suite’s one BPE tokenizer', () => {
    const expected = JSON.stringify(suiteBpeTokenizer().toJSON());
    for (const member of [...SUITE_MEMBERS, 'mixture'] as const) {
      const task = createTask('suite', { member, contextChars: 256 });
      expect(JSON.stringify(task.tokenizer.toJSON())).toBe(expected);
    }
  });

  it('refuses another task’s example and bad options, naming the field', () => {
    const task = createTask('suite', { member: 'niah-multi', contextChars: 256 });
    const other = createTask('retrieval', { variant: 'niah-multi', contextChars: 256 });
    const example = other.example(0, 0);
    expect(task.verify(example, example.target).correct).toBe(false);
    expectLetheError(() => createTask('suite', { member: 'chess' as never }), 'E_ARG', 'member');
    expectLetheError(() => createTask('suite', { contextChars: 128 }), 'E_ARG', 'contextChars');
    expectLetheError(
      () => createTask('suite', { countdownGoal: 'beside' as never }),
      'E_ARG',
      'countdownGoal',
    );
    // A warm-up selection may be shorter, down to two needles; a member that does not fit says so.
    const short = createTask('suite', { member: 'warmup/repeat', contextChars: 64 });
    expect(short.verify(short.example(0, 0), short.example(0, 0).target)).toEqual({
      correct: true,
    });
    expectLetheError(
      () => createTask('suite', { member: 'warmup/repeat', contextChars: 63 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () => createTask('suite', { member: 'niah-multi', contextChars: 64 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () => createTask('suite', { member: 'warmup/two-hop', contextChars: 64 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () => createTask('suite', { contextChars: 512, minContextChars: 1024 }),
      'E_ARG',
      'minContextChars',
    );
    expectLetheError(
      () => createTask('suite', { contextChars: 512, minContextChars: 128 }),
      'E_ARG',
      'minContextChars',
    );
    // The warm-up mixture goes down to 64 characters, but its two-hop member does not.
    expectLetheError(
      () =>
        createTask('suite', { member: 'warmup-mixture', contextChars: 256, minContextChars: 64 }),
      'E_ARG',
      'minContextChars',
    );
    expectLetheError(() => createTask('suite', { keys: 3 } as never), 'E_ARG', 'keys');
  });
});
