import { capacityFor, type GenerationTask, planGeneration } from '@lethe/eval';
import { type EvictionPolicy, NO_NEEDS, type PreparedPolicy } from '@lethe/kv-cache';
import { type DecoderModel, generate, policyContextOf } from '@lethe/model';

/** What one layer's cache holds at the end of a completion, averaged over examples and heads. */
export interface LayerHolding {
  /** Live entries over the tokens the full cache holds. */
  readonly retained: number;
  /** Mean age (tokens since it was written) of the live entries. */
  readonly age: number;
  /** A full cache's mean age at the same length (the completion's own): (length − 1) / 2. */
  readonly fullAge: number;
}

/** The paper's Fig. 6 under one budget: per layer, the retained cache and its age. */
export interface LayerProfile {
  readonly budget: number;
  readonly layers: readonly LayerHolding[];
}

/** What {@link layerProfiles} runs. */
export interface LayerProfileSettings {
  readonly model: DecoderModel;
  readonly task: GenerationTask;
  /** The policy, prepared (for the study: the registry's `namm` with its policy directory). */
  readonly policy: PreparedPolicy;
  /** Budget fractions of each example's full-cache peak (as the eval cells). */
  readonly budgets: readonly number[];
  /** Examples `0 … examples − 1` of `seed`. */
  readonly examples: number;
  readonly seed: number;
  /** Prompt tokens per prefill chunk (as the eval cells). */
  readonly prefillChunk: number;
}

/**
 * Runs each example alone, greedily, under the full cache (for its peak) and then under the
 * policy at each budget (capacity `capacityFor(budget, full peak)`, as the eval cells set it), and reads
 * every layer's live entries and their ages at the end of the completion.
 */
export async function layerProfiles(settings: LayerProfileSettings): Promise<LayerProfile[]> {
  const { model, task, policy, budgets } = settings;
  const { prompts, stop } = planGeneration(task, settings.examples, 1, settings.seed);
  const layers = model.config.num_hidden_layers;
  const heads = model.config.num_key_value_heads;
  const sums = budgets.map(() =>
    Array.from({ length: layers }, () => ({ retained: 0, age: 0, fullAge: 0 })),
  );
  const run = (prompt: Int32Array, eviction?: EvictionPolicy) =>
    generate({
      model,
      prompts: [prompt],
      maxNewTokens: task.maxNewTokens,
      sampling: { temperature: 0 },
      stop,
      eviction,
      prefillChunk: settings.prefillChunk,
    });
  for (const prompt of prompts) {
    const full = await run(prompt);
    const fullPeak = full.stats.caches[0]!.peakTotal / (layers * heads);
    for (let b = 0; b < budgets.length; b++) {
      const capacity = capacityFor(budgets[b]!, fullPeak);
      const { eviction } = policy.build({ capacity }, policyContextOf(model, 1));
      const cache = (await run(prompt, eviction)).caches[0]!;
      for (let layer = 0; layer < layers; layer++) {
        const observation = cache.observe(layer, NO_NEEDS);
        const length = cache.length(layer);
        let live = 0;
        let ageSum = 0;
        for (let h = 0; h < heads; h++) {
          const count = observation.liveCounts[h]!;
          live += count;
          for (let i = 0; i < count; i++) ageSum += observation.ages[h * observation.maxLive + i]!;
        }
        const sum = sums[b]![layer]!;
        sum.retained += live / (heads * length);
        sum.age += ageSum / live;
        sum.fullAge += (length - 1) / 2;
      }
    }
  }
  return budgets.map((budget, b) => ({
    budget,
    layers: sums[b]!.map((s) => ({
      retained: s.retained / prompts.length,
      age: s.age / prompts.length,
      fullAge: s.fullAge / prompts.length,
    })),
  }));
}
