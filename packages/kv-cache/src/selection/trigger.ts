import { assertInteger, assertRecord, LetheError } from '@lethe/core';
import type { TriggerContext } from '../policy/eviction-policy';

/**
 * When an eviction round runs for a layer.
 *
 * - `{ every }`: a cadence — every `every` tokens (δ), counted by `TriggerContext.sinceLastRound`.
 * - `{ whenLiveExceeds, slack }`: a live-count trigger — when some KV head of the layer holds more
 *   than `whenLiveExceeds + slack` live entries. With a `{ keepCount }` budget equal to
 *   `whenLiveExceeds`, a positive `slack` amortises rounds: the cache grows to keepCount + slack,
 *   then one round shrinks it back to keepCount. `slack` defaults to 0.
 */
export type Trigger =
  | { readonly every: number }
  | { readonly whenLiveExceeds: number; readonly slack?: number };

/** Throws `E_ARG` unless `trigger` is one {@link Trigger} form with positive integer values (slack ≥ 0). */
export function validateTrigger(trigger: Trigger, argument = 'trigger'): Trigger {
  assertRecord(trigger, argument);
  const hasEvery = 'every' in trigger;
  const hasLiveCount = 'whenLiveExceeds' in trigger;
  if (hasEvery === hasLiveCount) {
    throw new LetheError(
      'E_ARG',
      'must have exactly one of `every` or `whenLiveExceeds`',
      argument,
    );
  }
  if ('every' in trigger) {
    assertInteger(trigger.every, `${argument}.every`, 1);
  } else {
    assertInteger(trigger.whenLiveExceeds, `${argument}.whenLiveExceeds`, 1);
    if (trigger.slack !== undefined) assertInteger(trigger.slack, `${argument}.slack`, 0);
  }
  return trigger;
}

/**
 * Whether `trigger` fires for the layer described by `context`: for a cadence, when at least
 * `every` tokens have passed since the layer's last round; for a live-count trigger, when the
 * largest per-head live count exceeds `whenLiveExceeds + slack`.
 */
export function shouldTrigger(trigger: Trigger, context: TriggerContext): boolean {
  if ('every' in trigger) return context.sinceLastRound >= trigger.every;
  let maxLive = 0;
  for (const live of context.liveCounts) maxLive = Math.max(maxLive, live);
  // the tokens coming before the next round beyond one must fit too
  const coming = (context.incoming ?? 1) - 1;
  return maxLive + coming > trigger.whenLiveExceeds + (trigger.slack ?? 0);
}
