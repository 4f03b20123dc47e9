import type { SamplingOptions } from '@lethe/model';
import { invalidRequest } from './api-error';
import type { SamplingBody } from './request-schemas';

/**
 * The sampling options of a request: `temperature` (default 1; 0 = greedy), `top_p` (1),
 * `top_k` (0 or −1: all), `min_p` (0), `presence_penalty` and `frequency_penalty` (0, applied to
 * the tokens the choice generated, as the OpenAI API defines them) and `logit_bias` (ids as the
 * API's string keys).
 *
 * @throws ApiError 400 naming `logit_bias.<id>` for an id past the model's vocabulary.
 */
export function samplingOf(body: SamplingBody, vocab: number): SamplingOptions {
  const logitBias = new Map<number, number>();
  for (const [key, bias] of Object.entries(body.logit_bias ?? {})) {
    const id = Number(key);
    if (id >= vocab) {
      throw invalidRequest(
        `logit_bias.${key}`,
        `logit_bias.${key}: token ${key} is not below the model's vocabulary size ${vocab}`,
      );
    }
    logitBias.set(id, bias);
  }
  const topK = body.top_k ?? 0;
  return {
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    topK: topK === -1 ? 0 : topK,
    minP: body.min_p ?? 0,
    presencePenalty: body.presence_penalty ?? 0,
    frequencyPenalty: body.frequency_penalty ?? 0,
    ...(logitBias.size > 0 ? { logitBias } : {}),
  };
}
