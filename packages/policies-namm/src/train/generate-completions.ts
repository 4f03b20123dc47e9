import { assertInteger } from '@lethe/core';
import type { EvictionPolicy } from '@lethe/kv-cache';
import { type DecoderModel, generate, stopReason, validateStop } from '@lethe/model';
import type { NammCompletion, NammPromptRequest } from './prompt-request';

/**
 * Completes every request greedily (temperature 0) as one `generate` batch under `eviction`
 * (none: the full cache). Each sequence stops at its own request's stop conditions and
 * `maxNewTokens` (the batch runs to the largest), so its tokens are what it would generate
 * alone. Cache use comes from the generation statistics.
 *
 * @throws LetheError `E_ARG` naming `requests[i].maxNewTokens` (not a positive integer), the
 *   bad stop condition, or what `generate` rejects (e.g. `maxNewTokens` past the model's
 *   context: the longest prompt with the largest `maxNewTokens` must fit).
 */
export async function generateCompletions(
  model: DecoderModel,
  requests: readonly NammPromptRequest[],
  eviction?: EvictionPolicy,
): Promise<NammCompletion[]> {
  if (requests.length === 0) return [];
  requests.forEach((request, i) => {
    assertInteger(request.maxNewTokens, `requests[${i}].maxNewTokens`, 1);
    validateStop(request.stop, model.config.vocab_size);
  });
  const generated: number[][] = requests.map(() => []);
  const result = await generate({
    model,
    prompts: requests.map((r) => r.prompt),
    maxNewTokens: Math.max(...requests.map((r) => r.maxNewTokens)),
    sampling: { temperature: 0 },
    eviction,
    onToken: ({ sequence, token }) => {
      const tokens = generated[sequence]!;
      tokens.push(token);
      const request = requests[sequence]!;
      return tokens.length < request.maxNewTokens && stopReason(tokens, request.stop) === undefined;
    },
  });
  const heads = model.config.num_hidden_layers * model.config.num_key_value_heads;
  return requests.map((request, b) => {
    const tokens = result.tokens[b]!;
    const full = heads * (request.prompt.length + tokens.length - 1);
    const stats = result.stats.caches[b]!;
    return { tokens, liveRatio: stats.liveTotal / full, peakRatio: stats.peakTotal / full };
  });
}
