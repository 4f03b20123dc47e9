/** Prefix of the final answer line of every generation task. */
export const ANSWER_PREFIX = 'answer:';

/**
 * The stop text of every generation task: a completion ends with `answer: …` followed by this
 * character, which appears nowhere else in a reference completion.
 */
export const STOP_TEXT = '.';

/** The final answer line of a completion, or why there is none. */
export type FinalAnswer =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: string };

/**
 * The reference form of a final answer: `answer: <text>` followed by {@link STOP_TEXT}.
 */
export function formatAnswer(text: string): string {
  return `${ANSWER_PREFIX} ${text}${STOP_TEXT}`;
}

/**
 * Extracts the final answer of a completion. The completion is cut at the first `stopText`
 * (the stop text may be present or not: harnesses differ in whether they keep it), trailing
 * blank lines are dropped, and the last line must start with `answer:`; what follows it,
 * trimmed, is the answer. Nothing else in the completion (a search trace, scratchpad lines) is
 * looked at. Never throws.
 */
export function finalAnswer(completion: unknown, stopText: string = STOP_TEXT): FinalAnswer {
  if (typeof completion !== 'string') {
    return { ok: false, reason: `malformed: completion is a ${typeof completion}, not a string` };
  }
  const stop = stopText === '' ? -1 : completion.indexOf(stopText);
  const text = stop === -1 ? completion : completion.slice(0, stop);
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) return { ok: false, reason: 'malformed: empty completion' };
  const last = lines[lines.length - 1]!.trimStart();
  if (!last.startsWith(ANSWER_PREFIX)) {
    return { ok: false, reason: `malformed: the last line is not an "${ANSWER_PREFIX}" line` };
  }
  const answer = last.slice(ANSWER_PREFIX.length).trim();
  if (answer === '') return { ok: false, reason: 'malformed: empty answer' };
  return { ok: true, text: answer };
}
