import { LetheError } from '@lethe/core';
import {
  checkQueryWindow,
  entriesAfterRound,
  isRateBudget,
  MAX_QUERY_WINDOW_FLOATS,
  type PolicyProvider,
  requireCapacityBudget,
} from '@lethe/kv-cache';
import * as v from 'valibot';
import { withEvictionRateTag } from './interoception';
import { DEFAULT_NGC_LOGITS } from './logits';
import { NGC_DEFAULT_BLOCK_SIZE, NGC_DEFAULT_WINDOW, NgcPolicy } from './ngc-policy';

const positiveInteger = v.pipe(v.number(), v.integer(), v.minValue(1));
const temperature = v.pipe(v.number(), v.finite(), v.gtValue(0));
/**
 * A scoring window no cache can hold is refused here, whatever the model: a cache keeps at most
 * `MAX_QUERY_WINDOW_FLOATS` floats of queries per layer, so never more queries than that.
 * `build` checks the model's own bound (`maxQueryWindow`).
 */
const windowSize = v.pipe(
  positiveInteger,
  v.maxValue(
    MAX_QUERY_WINDOW_FLOATS,
    `must be ≤ ${MAX_QUERY_WINDOW_FLOATS}: no cache holds a longer query window`,
  ),
);

const NGC_OPTIONS = v.strictObject({
  blockSize: v.pipe(
    v.optional(positiveInteger, NGC_DEFAULT_BLOCK_SIZE),
    v.description('block size b: entries are kept and evicted in blocks of b consecutive entries'),
  ),
  window: v.pipe(
    v.optional(windowSize, NGC_DEFAULT_WINDOW),
    v.description(
      'scoring window w: the most recent queries whose attention scores the blocks (at most what the cache holds, maxQueryWindow(queryHeads, headDim))',
    ),
  ),
  logits: v.pipe(
    v.optional(
      v.variant('kind', [
        v.strictObject({ kind: v.literal('score') }),
        v.strictObject({ kind: v.picklist(['log', 'scaled']), temperature }),
      ]),
      { ...DEFAULT_NGC_LOGITS },
    ),
    v.description('how block scores become logits: score, log (÷ τ) or scaled (÷ τ)'),
  ),
  mode: v.pipe(
    v.optional(v.picklist(['greedy', 'sample']), 'greedy'),
    v.description('greedy (evaluation) or a Gumbel-top-k draw (training rollouts)'),
  ),
  slackFraction: v.pipe(
    v.optional(v.pipe(v.number(), v.minValue(0)), 0),
    v.description(
      'a round runs when a KV head exceeds capacity + ceil(slackFraction · capacity) entries',
    ),
  ),
  interoception: v.pipe(
    v.optional(v.picklist(['off', 'characters', 'markup']), 'off'),
    v.description(
      'the model was trained with the eviction-rate tag in its prompts (§5.3): append it, spelt out (characters) or as markup characters ⟨p%⟩ (markup); rate schedules only',
    ),
  ),
});

/** The provider object behind {@link ngcProvider}. */
const provider: PolicyProvider<typeof NGC_OPTIONS> = {
  name: 'ngc',
  summary:
    'Neural Garbage Collection: the RL-trained LM scores its own cache blocks with attention (learned)',
  options: NGC_OPTIONS,
  learned: {
    /** @throws LetheError `E_FORMAT` when the manifest names no model (NGC's policy is one). */
    async load(directory) {
      if (directory.manifest.model === undefined) {
        throw new LetheError(
          'E_FORMAT',
          'an NGC policy is its RL-trained model: policy.json must name it in "model"',
          `${directory.files.location}/policy.json`,
        );
      }
      return undefined;
    },
  },
  /**
   * @throws LetheError `E_ARG` naming `options.window` when the model's cache cannot hold that
   *   many queries (`maxQueryWindow(queryHeads, headDim)`); `E_BUDGET` naming the option or
   *   budget field that does not fit the budget's form, or `budget.capacity` when the
   *   `capacity − 1` entries a round leaves hold no whole block.
   */
  build({ budget, options, context }) {
    const { queryHeads, headDim } = context.model;
    const shape = {
      blockSize: options.blockSize,
      window: checkQueryWindow(options.window, queryHeads, headDim, 'options.window'),
      logits: options.logits,
      mode: options.mode,
    };
    if (!isRateBudget(budget)) {
      if (options.interoception !== 'off') {
        throw new LetheError(
          'E_BUDGET',
          'the interoception tag states an eviction rate: build it for a rate schedule ({ keepRatio, every })',
          'options.interoception',
        );
      }
      const { capacity } = requireCapacityBudget(budget, 'ngc');
      const keepCount = entriesAfterRound({ capacity });
      if (keepCount < options.blockSize) {
        throw new LetheError(
          'E_BUDGET',
          `leaves ${keepCount} entries after a round (one slot holds the next token), no whole block of ${options.blockSize}; lower blockSize or raise the budget`,
          'budget.capacity',
        );
      }
      const schedule = { keepCount, slack: Math.ceil(options.slackFraction * capacity) };
      return { eviction: new NgcPolicy({ ...schedule, ...shape }) };
    }
    if (options.slackFraction !== 0) {
      throw new LetheError(
        'E_BUDGET',
        `a rate schedule triggers its own rounds (every ${budget.every} tokens); leave slackFraction out`,
        'options.slackFraction',
      );
    }
    if (budget.keepRatio === 1) {
      throw new LetheError(
        'E_BUDGET',
        'must be below 1 for NGC: a round evicts ⌊ε·N⌋ blocks with ε = 1 − keepRatio > 0',
        'budget.keepRatio',
      );
    }
    const evictionRate = 1 - budget.keepRatio;
    const eviction = new NgcPolicy({ evictionRate, cadence: budget.every, ...shape });
    const form = options.interoception;
    if (form === 'off') return { eviction };
    return {
      eviction,
      prompt: { text: (prompt) => withEvictionRateTag(prompt, evictionRate, form) },
    };
  },
};

/**
 * NGC as a policy provider. NGC's policy is the RL-trained language model itself (its attention
 * scores its cache), so it is a learned provider whose policy directory names that model: its
 * `policy.json` has `"provider": "ngc"`, the settings the model was trained with as `options`
 * (`blockSize`, `window`, `logits`) and `"model": "."` when the checkpoint sits beside it. Under a
 * budget it runs NGC's capacity schedule (`NgcSchedule`'s `{ keepCount: capacity − 1, slack }`): a
 * round when a layer exceeds the capacity, keeping the ⌊(capacity − 1) / b⌋ best blocks (greedy by
 * default), so the next token fits the ceiling.
 * Under a rate schedule it runs the paper's (§5.1): every `every` tokens a layer keeps
 * K = N − ⌊ε·N⌋ of its N blocks, ε = 1 − `keepRatio` (which must be below 1); a model trained
 * with interoception (§5.3, option `interoception`) also gets the eviction-rate tag appended to
 * its prompts (the set's `prompt` conditioning).
 */
export const ngcProvider: PolicyProvider<typeof NGC_OPTIONS> = Object.freeze(provider);
