import { LetheError } from '@lethe/core';

/**
 * The percentage of an eviction rate as NGC's tag writes it: 100·rate as an integer when it is
 * one, else with one or two decimals — the fewest that represent it — and rounded to two
 * decimals when two do not suffice (1/3 → "33.33"). "Represent" allows a relative error of 1e-9,
 * which absorbs binary floating point (0.07 · 100 = 7.000000000000001 is written "7").
 */
function percentText(rate: number): string {
  const percent = 100 * rate;
  for (let decimals = 0; decimals <= 2; decimals++) {
    const text = percent.toFixed(decimals);
    if (Math.abs(Number(text) - percent) <= 1e-9 * percent) return text;
  }
  return percent.toFixed(2);
}

/**
 * How the interoception tag is written: `characters`, its markup spelt out
 * (`<eviction_rate>30%</eviction_rate>`, one token per character for a character tokenizer), or
 * `markup`, each markup string as one character ({@link TAG_MARKUP}: `⟨30%⟩`), which a
 * character vocabulary holding those two characters reads as one token each — what a subword
 * vocabulary would give an LLM.
 */
export type TagForm = 'characters' | 'markup';

/** The single characters that stand for the tag's opening and closing markup in `markup` form. */
export const TAG_MARKUP = Object.freeze({
  open: '<eviction_rate>',
  close: '</eviction_rate>',
  openChar: '⟨',
  closeChar: '⟩',
});

/**
 * NGC's budget-aware interoception tag (§5.3): `<eviction_rate>p%</eviction_rate>` with p the
 * eviction rate in percent (`0.5` → `<eviction_rate>50%</eviction_rate>`, `0.125` →
 * `12.5%`, `0.07` → `7%`, `1/3` → `33.33%`; see the rounding rule above); in `markup` form
 * `⟨50%⟩` (see {@link TagForm}).
 *
 * @param rate Eviction rate ε ∈ [0, 1]; 0 (`0%`) says the cache is not evicted, as in the
 *   first stage of the curriculum.
 * @throws LetheError `E_ARG` (`rate`) outside [0, 1].
 */
export function evictionRateTag(rate: number, form: TagForm = 'characters'): string {
  if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) {
    throw new LetheError('E_ARG', `must be in [0, 1], got ${String(rate)}`, 'rate');
  }
  const percent = `${percentText(rate)}%`;
  return form === 'markup'
    ? `${TAG_MARKUP.openChar}${percent}${TAG_MARKUP.closeChar}`
    : `${TAG_MARKUP.open}${percent}${TAG_MARKUP.close}`;
}

/**
 * Appends the {@link evictionRateTag} to a prompt, as NGC does for every prompt of a rollout group
 * trained (and evaluated) at eviction rate p (§5.3: "append the same structured tag to every
 * prompt in that group"). Nothing is inserted between the prompt and the tag; add a separator to
 * the prompt if the prompt template needs one. The tokenizer must cover the tag's characters.
 *
 * @throws LetheError `E_ARG` (`rate`) outside [0, 1].
 */
export function withEvictionRateTag(
  prompt: string,
  rate: number,
  form: TagForm = 'characters',
): string {
  return `${prompt}${evictionRateTag(rate, form)}`;
}
