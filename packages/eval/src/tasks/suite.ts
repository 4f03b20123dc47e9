import { LetheError } from '@lethe/core';
import { STOP_TEXT } from './answer';
import { countdownTask, VERBOSE_COUNTDOWN } from './countdown';
import { COUNTDOWN_GOALS, type CountdownGoal } from './countdown-solver';
import { choiceOption, intOption, optionFields } from './options';
import { retrievalTask } from './retrieval';
import { SeededRandom } from './seeded';
import type { GenerationTask, TaskExample, Verdict } from './task';
import { taskTokenizer } from './tokenizers';

/** The members of the long-context suite, in report order. */
export const SUITE_MEMBERS = [
  'niah-multi',
  'niah-multivalue',
  'variable-tracking',
  'frequent-words',
  'two-hop',
  'countdown-verbose',
] as const;

/** A member of the suite. */
export type SuiteMember = (typeof SUITE_MEMBERS)[number];

/** The members that retrieve from their context: every member but verbose Countdown. */
export const SUITE_RETRIEVAL_MEMBERS = SUITE_MEMBERS.filter(
  (member): member is Exclude<SuiteMember, 'countdown-verbose'> => member !== 'countdown-verbose',
);

/**
 * A curriculum's stepping stones (the suite is never evaluated on them): the retrieval members
 * at their easiest, in the same order — one needle, one key of two values, one chain of one hop,
 * the most frequent word, one chain of two hops: nothing to tell apart, so copying from the
 * context pays from the first updates —, a line of words and its copy (`copy`: every token
 * follows the one it followed before, the pattern a previous-token head and an induction head
 * predict, with no template words between), and the recitation drill (needles only, all but the
 * queried one recited, under a loss on the prompt too) in the needle line's order (`repeat`: a
 * copy whose values sit three tokens after their keys) and in a fresh order (`recitation`: an
 * associative-recall target in every recited needle).
 */
export const SUITE_WARMUP_MEMBERS = [
  'warmup/niah-single',
  'warmup/niah-multivalue',
  'warmup/variable-tracking',
  'warmup/frequent-words',
  'warmup/two-hop',
  'warmup/copy',
  'warmup/repeat',
  'warmup/recitation',
] as const;

/**
 * Warm-up members posed alone (`member: '<name>'`), outside `warmup-mixture` (whose examples a
 * committed model was trained on, so its members stay the eight above): `warmup/lookup`, the
 * recitation drill with needles recited as drawn with replacement (`order: 'sampled'`), where no
 * recited value or answer can be told by elimination, only by its key;
 * `warmup/variable-lookup`, variable tracking's lookups as a drill: 8 chains of 3 hops with no
 * filler, 6 of them asked and answered before the question (under a loss on the prompt, 24
 * recited variables a sequence, each found from its value or from the variable before it); and
 * `warmup/chain-lookup`, `two-hop`'s lookups as a drill: the lookup drill over `two-hop`'s chains
 * (links and the needles they point to, recited as drawn with replacement; `form: 'chains'` of
 * the recitation), answered `via <b>` then the value as `two-hop` is — every recited link a
 * lookup of a key by a key, the first hop the backbone answers by place instead (it names the
 * later link's key); `warmup/possessive-lookup`, the same with links worded
 * `the number for <a> is <b>'s.` (`link: 'possessive'`), `b` two tokens after `a` (five in
 * `two-hop`'s wording; a needle's value three after its key).
 */
export const SUITE_SOLO_WARMUP_MEMBERS = [
  'warmup/lookup',
  'warmup/variable-lookup',
  'warmup/chain-lookup',
  'warmup/possessive-lookup',
] as const;

/** A warm-up member of the suite. */
export type SuiteWarmupMember =
  | (typeof SUITE_WARMUP_MEMBERS)[number]
  | (typeof SUITE_SOLO_WARMUP_MEMBERS)[number];

/**
 * What a suite task poses: one member, every member in turn (`mixture`, for training), the
 * retrieval members in turn (`retrieval-mixture`: a curriculum's first stage, where short
 * sequences and large batches teach copying without verbose Countdown's long traces), the
 * warm-up members in turn (`warmup-mixture`, {@link SUITE_WARMUP_MEMBERS}: the stage before), or
 * one warm-up member.
 */
export type SuiteSelection =
  | SuiteMember
  | SuiteWarmupMember
  | 'mixture'
  | 'retrieval-mixture'
  | 'warmup-mixture';

/**
 * Selections joined by `+`, posed in turn as one list of members (for training a mixture of a
 * stage's members and drills): `retrieval-mixture+warmup/copy` is the five retrieval members
 * then the copy drill, example `i` member `i mod 6`'s. A member listed twice is posed twice as
 * often.
 */
export type SuiteSelectionSum = `${SuiteSelection}+${string}`;

/** The selections `member` accepts alone, in the order an error lists them. */
const SUITE_SELECTIONS: readonly SuiteSelection[] = [
  ...SUITE_MEMBERS,
  ...SUITE_WARMUP_MEMBERS,
  ...SUITE_SOLO_WARMUP_MEMBERS,
  'mixture',
  'retrieval-mixture',
  'warmup-mixture',
];

/** Resolved options of the suite task. */
export interface SuiteOptions {
  /**
   * The member posed, or `mixture` (default): example `i` is member `i mod 6`'s; or
   * `retrieval-mixture`: example `i` is retrieval member `i mod 5`'s; or `warmup-mixture`:
   * example `i` is warm-up member `i mod 8`'s; or selections joined by `+`
   * ({@link SuiteSelectionSum}): their members in turn.
   */
  readonly member: SuiteSelection | SuiteSelectionSum;
  /**
   * Context before the question of the retrieval members, in characters (the longest, under a
   * spread of lengths: see `minContextChars`; default 1024, at least
   * {@link SUITE_MIN_CONTEXT_CHARS}, or {@link SUITE_MIN_WARMUP_CONTEXT_CHARS} for a warm-up
   * selection; the suite's BPE reads 3.4–3.7 of them per token).
   */
  readonly contextChars: number;
  /**
   * Shortest context of an example, in characters (default `contextChars`: every example at
   * `contextChars`). Below it, each example draws its own context length uniformly from
   * `[minContextChars, contextChars]`, seeded by the example's seed and index: a training stage's
   * spread of lengths, so a model meets its needles at every distance and position up to the
   * longest instead of learning one layout (a model trained at one length does not read a
   * longer one).
   */
  readonly minContextChars: number;
  /**
   * Where verbose Countdown's reference trace keeps its target (`goal` of `countdownTask`):
   * `checked` (default), the member as the suite poses it; `restated`, the form the suite's
   * Countdown stages up to `suite-countdown-anneal3` were trained and scored on.
   */
  readonly countdownGoal: CountdownGoal;
}

/** Options accepted by {@link suiteTask}; every field is optional. */
export type SuiteOptionsInput = Partial<SuiteOptions>;

/** Shortest `contextChars`: every retrieval member fits it with its distractors. */
export const SUITE_MIN_CONTEXT_CHARS = 256;

/**
 * Shortest `contextChars` of a warm-up selection (one warm-up member or `warmup-mixture`): a
 * stepping stone may be shorter than the suite (two needles for a recitation); each member still
 * refuses a context it does not fit, naming `contextChars`.
 */
export const SUITE_MIN_WARMUP_CONTEXT_CHARS = 64;

/** Longest `contextChars` (the retrieval task's own bound applies too). */
export const SUITE_MAX_CONTEXT_CHARS = 65536;

/**
 * The longest verbose-Countdown completion the suite poses. The verbose preset allows 1,536
 * characters; the suite stops at 768 so a training batch of them fits the wasm backend's memory
 * (attention over S tokens with gradients holds S² scores per head and layer).
 */
export const SUITE_COUNTDOWN_MAX_TRACE_CHARS = 768;

/**
 * The largest result verbose Countdown's reference search tries in the suite: its trace's
 * arithmetic stays at sums, differences and products of at most three digits (unbounded, a
 * search writes products such as `189*16=3024`, each digit computed in one forward pass of a
 * task model). Instances the bounded search cannot solve are drawn again.
 */
export const SUITE_COUNTDOWN_MAX_VALUE = 100;

/** Ground truth of a suite example: the member's, with the member's name. */
export type SuiteData = Readonly<Record<string, unknown>> & {
  readonly member: SuiteMember | SuiteWarmupMember;
};

/**
 * The member task behind `member` at `contextChars`. The retrieval members keep their distractors
 * fixed as the filler grows with the context, as RULER does:
 *
 * - `niah-multi`: 4 needles of the same form in filler, one queried;
 * - `niah-multivalue`: 4 values of the queried key and one distractor key;
 * - `variable-tracking`: 2 chains of 3 hops, one queried by its last variable; the completion
 *   writes the route back to the value (`via <x2> <x1> <x0>`) before it (`query: 'value'`): each
 *   variable found by its own statement, the direction a needle is read in (RULER's question, a
 *   value's holders, finds each variable by the statement that names the one before it, which
 *   the suite's backbones did not learn: 0 of 8 held out through every stage);
 * - `frequent-words`: the 3 most frequent pseudo-words under Zipf exponent 2, RULER's own
 *   (`fwe` in its `synthetic.yaml`; at 1,024 characters the counts run 131, 33, 15, then 8);
 *   under exponent 1 (46, 23, 16, then 12) no backbone of the suite told the third word from
 *   the fourth;
 * - `two-hop`: 2 chains `a → b → value`, one queried; the completion names `b` (`via <b>`)
 *   before its answer, as variable tracking lists its chain: a lookup keyed by what the model
 *   wrote, so the value needle matters only after the question (its warm-up keeps the route
 *   hidden);
 * - `countdown-verbose`: {@link VERBOSE_COUNTDOWN} with completions of 256–768 characters,
 *   results of at most {@link SUITE_COUNTDOWN_MAX_VALUE}, and every line checking its result
 *   against the target written beside it (`goal: 'checked'`: `  21+8=29;28`, states as
 *   `23-2=21;28:7 1 21`). With the target in the prompt alone, hundreds of tokens back, a model
 *   that wrote a whole search right went on past the line reaching it in 5 of 8 validation
 *   examples; restated before each state only (as Stream of Search's nodes do), 16 of the 22
 *   failures in 64 validation examples of the best model were that check — an answer after a
 *   near miss (`21+8=29` for 28), or a search going on past the target.
 */
function memberTask(
  member: SuiteMember | SuiteWarmupMember,
  contextChars: number,
  countdownGoal: CountdownGoal,
): GenerationTask {
  switch (member) {
    case 'warmup/niah-single':
      return retrievalTask({ variant: 'niah-single', contextChars, valueDigits: 4 });
    case 'warmup/niah-multivalue':
      return retrievalTask({ variant: 'niah-multivalue', contextChars, keys: 1, values: 2 });
    case 'warmup/variable-tracking':
      return retrievalTask({ variant: 'variable-tracking', contextChars, chains: 1, hops: 1 });
    case 'warmup/frequent-words':
      return retrievalTask({ variant: 'frequent-words', contextChars, top: 1 });
    case 'warmup/two-hop':
      return retrievalTask({ variant: 'two-hop', contextChars, chains: 1 });
    case 'warmup/copy':
      return retrievalTask({ variant: 'copy', contextChars });
    case 'warmup/repeat':
      return retrievalTask({ variant: 'recitation', contextChars, valueDigits: 4, order: 'same' });
    case 'warmup/recitation':
      return retrievalTask({ variant: 'recitation', contextChars, valueDigits: 4 });
    case 'warmup/variable-lookup':
      return retrievalTask({
        variant: 'variable-tracking',
        contextChars,
        chains: 8,
        hops: 3,
        haystack: 'none',
        recited: 6,
      });
    case 'warmup/chain-lookup':
    case 'warmup/possessive-lookup':
      return retrievalTask({
        variant: 'recitation',
        contextChars,
        valueDigits: 4,
        order: 'sampled',
        form: 'chains',
        link: member === 'warmup/possessive-lookup' ? 'possessive' : 'number',
      });
    case 'warmup/lookup':
      return retrievalTask({
        variant: 'recitation',
        contextChars,
        valueDigits: 4,
        order: 'sampled',
      });
    case 'niah-multi':
      return retrievalTask({ variant: 'niah-multi', contextChars, keys: 4, valueDigits: 4 });
    case 'niah-multivalue':
      return retrievalTask({ variant: 'niah-multivalue', contextChars, keys: 2, values: 4 });
    case 'variable-tracking':
      return retrievalTask({
        variant: 'variable-tracking',
        contextChars,
        chains: 2,
        hops: 3,
        query: 'value',
      });
    case 'frequent-words':
      return retrievalTask({ variant: 'frequent-words', contextChars, top: 3, alpha: 2 });
    case 'two-hop':
      return retrievalTask({ variant: 'two-hop', contextChars, chains: 2, route: 'written' });
    case 'countdown-verbose':
      return countdownTask({
        ...VERBOSE_COUNTDOWN,
        maxTraceChars: SUITE_COUNTDOWN_MAX_TRACE_CHARS,
        maxValue: SUITE_COUNTDOWN_MAX_VALUE,
        goal: countdownGoal,
      });
  }
}

/** The context length of example `index` of `seed` under a spread of lengths. */
function exampleContextChars(options: SuiteOptions, seed: number, index: number): number {
  const random = SeededRandom.forExample('suite/context-chars', seed, index);
  return random.int(options.minContextChars, options.contextChars);
}

/**
 * The selections of option `member` (absent: `mixture`), each checked against
 * {@link SUITE_SELECTIONS}, split at `+`.
 */
function selectionParts(value: unknown): SuiteSelection[] {
  if (typeof value !== 'string' || !value.includes('+')) {
    return [choiceOption({ member: value }, 'member', 'mixture', SUITE_SELECTIONS)];
  }
  return value.split('+').map((part) => {
    if (SUITE_SELECTIONS.includes(part as SuiteSelection)) return part as SuiteSelection;
    throw new LetheError(
      'E_ARG',
      `every part of ${JSON.stringify(value)} joined by "+" must be one of ${SUITE_SELECTIONS.map((c) => JSON.stringify(c)).join(', ')}; got ${JSON.stringify(part)}`,
      'member',
    );
  });
}

/** The members one selection poses in turn. */
function selectionMembers(selection: SuiteSelection): readonly (SuiteMember | SuiteWarmupMember)[] {
  switch (selection) {
    case 'mixture':
      return SUITE_MEMBERS;
    case 'retrieval-mixture':
      return SUITE_RETRIEVAL_MEMBERS;
    case 'warmup-mixture':
      return SUITE_WARMUP_MEMBERS;
    default:
      return [selection];
  }
}

/** Every selected member must fit the shortest context of a spread, or the option is refused. */
function checkShortestFits(
  selected: readonly (SuiteMember | SuiteWarmupMember)[],
  minContextChars: number,
  countdownGoal: CountdownGoal,
): void {
  for (const member of selected) {
    try {
      memberTask(member, minContextChars, countdownGoal);
    } catch (error) {
      if (!(error instanceof LetheError) || error.argument !== 'contextChars') throw error;
      throw new LetheError(
        'E_ARG',
        `${member} does not fit ${minContextChars} characters (as contextChars it is refused: ${error.message})`,
        'minContextChars',
      );
    }
  }
}

/**
 * The long-context suite: five RULER-style retrieval members and verbose Countdown under one
 * byte-level BPE (`taskTokenizer('suite')`), so one model can be trained on all of them
 * (`member: 'mixture'`) and evaluated on each (`member: '<name>'`, one sweep task per member,
 * told apart by their labels). A member's examples are the member task's own (same seed, same
 * index, same text); in the mixture, example `i` of a seed is example `⌊i / 6⌋` of member
 * `i mod 6`, so every prefix of a seed's examples is balanced over the members (in the
 * retrieval mixture, `⌊i / 5⌋` of retrieval member `i mod 5`). Selections joined by `+`
 * (`retrieval-mixture+warmup/copy`) are posed the same way, as the one list of their members.
 *
 * @example
 * ```ts
 * const task = createTask('suite', { member: 'two-hop', contextChars: 512 });
 * const example = task.example(0, 0);
 * task.verify(example, example.target); // { correct: true }
 * ```
 * @throws LetheError `E_ARG` naming the field for a bad option.
 */
export function suiteTask(options?: SuiteOptionsInput): GenerationTask<SuiteOptions> {
  const fields = optionFields(
    options,
    ['member', 'contextChars', 'minContextChars', 'countdownGoal'],
    'suite',
  );
  const parts = selectionParts(fields.member);
  const member = parts.join('+') as SuiteSelection | SuiteSelectionSum;
  const warmup = parts.every((part) => part === 'warmup-mixture' || part.startsWith('warmup/'));
  const shortest = warmup ? SUITE_MIN_WARMUP_CONTEXT_CHARS : SUITE_MIN_CONTEXT_CHARS;
  const contextChars = intOption(fields, 'contextChars', 1024, shortest, SUITE_MAX_CONTEXT_CHARS);
  const resolved: SuiteOptions = {
    member,
    contextChars,
    minContextChars: intOption(fields, 'minContextChars', contextChars, shortest, contextChars),
    countdownGoal: choiceOption(fields, 'countdownGoal', 'checked', COUNTDOWN_GOALS),
  };
  const selected = parts.flatMap(selectionMembers);
  const tasks = new Map(
    selected.map((m) => [m, memberTask(m, resolved.contextChars, resolved.countdownGoal)]),
  );
  // A member listed twice takes its own examples in turn: the `turn`-th of its `turns` slots.
  const repeats = selected.map((m, slot) => ({
    turn: selected.slice(0, slot).filter((other) => other === m).length,
    turns: selected.filter((other) => other === m).length,
  }));
  const ranged = resolved.minContextChars < resolved.contextChars;
  if (ranged) checkShortestFits(selected, resolved.minContextChars, resolved.countdownGoal);

  const example = (seed: number, index: number): TaskExample => {
    const slot = index % selected.length;
    const member = selected[slot]!;
    const task = ranged
      ? memberTask(member, exampleContextChars(resolved, seed, index), resolved.countdownGoal)
      : tasks.get(member)!;
    const { turn, turns } = repeats[slot]!;
    const inner = task.example(seed, Math.floor(index / selected.length) * turns + turn);
    return { ...inner, task: 'suite', index, data: { ...inner.data, member } };
  };
  const verify = (example: TaskExample, completion: string): Verdict => {
    const member = (example.data as Partial<SuiteData>).member;
    const task = typeof member === 'string' ? tasks.get(member as SuiteMember) : undefined;
    if (task === undefined) {
      return { correct: false, reason: `example is not one of ${[...tasks.keys()].join(', ')}` };
    }
    return task.verify(example, completion);
  };
  return {
    kind: 'generation',
    name: 'suite',
    options: resolved,
    tokenizer: taskTokenizer('suite'),
    maxNewTokens: Math.max(...[...tasks.values()].map((t) => t.maxNewTokens)),
    stopText: STOP_TEXT,
    example,
    verify,
  };
}
