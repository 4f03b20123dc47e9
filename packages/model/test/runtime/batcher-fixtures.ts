import {
  type Anchors,
  type AttentionGate,
  type ComputePolicy,
  type EvictionPolicy,
  type KeepDecision,
  type LayerControls,
  type LayerObservation,
  NO_NEEDS,
  type PolicySet,
  type RandomSource,
  type StepObservation,
  type TriggerContext,
} from '@lethe/kv-cache';
import { H2OPolicy, QuestSelector, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { Rng, tf } from '@lethe/tensor';
import type { DecoderModel } from '../../src/decoder/index';
import type { ModelConfig } from '../../src/io/index';
import { type BatchRequest, generate } from '../../src/runtime/index';

/**
 * A compute policy giving per-step controls drawn from the sequence's own stream: a `tokenKeep`
 * κ in [0.3, 1) in every layer, an MLP input keep ρ in layer 0 and, one step in three, 4-bit
 * activations; it counts its steps in its per-sequence state.
 */
export class DrawnControls implements ComputePolicy<{ steps: number }> {
  readonly name = 'drawn-controls-test';
  readonly needs = { embedding: true, logits: true };

  constructor(
    private readonly layers: number,
    readonly refreshEvery?: number,
  ) {}

  createState() {
    return { steps: 0 };
  }

  controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: { steps: number },
  ): readonly (LayerControls | undefined)[] {
    state!.steps += 1;
    if (observation.embedding === undefined || observation.logits === undefined) {
      throw new Error('the runtime gave no embedding or logits');
    }
    const [kappa, rho, bits] = rng.fillUniform(new Float32Array(3));
    return Array.from({ length: this.layers }, (_, l) => ({
      tokenKeep: 0.3 + 0.7 * kappa!,
      ...(l === 0 ? { mlpInputKeep: 0.5 + 0.5 * rho! } : {}),
      ...(bits! < 1 / 3 ? { activationBits: 4 } : {}),
    }));
  }
}

/** log σ(x·W_l): a linear GSA-style gate per layer with random weights. */
export class LinearGate implements AttentionGate<tf.Tensor> {
  readonly name = 'linear-gate-test';
  private readonly weights: tf.Tensor2D[];

  constructor(config: ModelConfig, seed: number) {
    const rng = new Rng(seed);
    const { hidden_size: width, num_key_value_heads: kvHeads } = config;
    this.weights = Array.from({ length: config.num_hidden_layers }, () =>
      tf.tensor2d(rng.normal(width * kvHeads, 0, 0.8), [width, kvHeads]),
    );
  }

  logGates(layer: number, x: tf.Tensor): tf.Tensor {
    return tf.tidy(() => {
      const [batch, length] = x.shape as [number, number, number];
      const logits = tf.matMul(tf.reshape(x, [batch * length, -1]), this.weights[layer]!);
      const kvHeads = this.weights[layer]!.shape[1];
      return tf.transpose(tf.logSigmoid(tf.reshape(logits, [batch, length, kvHeads])), [0, 2, 1]);
    });
  }

  dispose(): void {
    tf.dispose(this.weights);
  }
}

/** GSA-style eviction: once a head holds `capacity` entries, keep the newest and the highest gates. */
export class TopGatePolicy implements EvictionPolicy {
  readonly name = 'top-gate-test';
  readonly needs = NO_NEEDS;
  readonly anchors: Anchors = { sinks: 0, window: 1 };

  constructor(
    readonly gate: AttentionGate,
    private readonly capacity: number,
  ) {}

  shouldEvict(context: TriggerContext): boolean {
    return context.liveCounts.some((n) => n >= this.capacity);
  }

  select(observation: LayerObservation): KeepDecision {
    const { kvHeads, maxLive, liveCounts, gates } = observation;
    const keep = Array.from({ length: kvHeads }, (_, h) => {
      const live = liveCounts[h]!;
      const row = [...gates!.subarray(h * maxLive, h * maxLive + live - 1)].map((g, i) => [g, i]);
      row.sort((a, b) => b[0]! - a[0]! || a[1]! - b[1]!);
      const chosen = row.slice(0, this.capacity - 2).map(([, i]) => i!);
      return Int32Array.from([...chosen, live - 1].sort((a, b) => a - b));
    });
    return { granularity: 'head', keep };
  }
}

/** The kinds of policy set the batcher tests draw from. */
export const POLICY_KINDS = [
  'full',
  'streaming-llm',
  'h2o',
  'compute',
  'compute-refresh',
  'quest',
  'gate',
] as const;

/** One of {@link POLICY_KINDS}. */
export type PolicyKind = (typeof POLICY_KINDS)[number];

/**
 * A fresh policy set of `kind` for one sequence of `config`'s model (`size`: the entries a
 * heuristic's round keeps, its `keepCount`, and the gate policy's ceiling — 6 or more; Quest on
 * pages of 4 from layer 0, a refresh every 3 steps); `gate` is the GSA gate to use.
 */
export function policiesOf(
  kind: PolicyKind,
  config: ModelConfig,
  gate: AttentionGate,
  size = 10,
): PolicySet {
  const layers = config.num_hidden_layers;
  switch (kind) {
    case 'full':
      return {};
    case 'streaming-llm':
      return {
        eviction: new StreamingLLMPolicy({
          budget: { keepCount: size },
          anchors: { sinks: 2, window: 0 },
        }),
      };
    case 'h2o':
      return { eviction: new H2OPolicy({ budget: { keepCount: size } }) };
    case 'compute':
      return { compute: new DrawnControls(layers) };
    case 'compute-refresh':
      return { compute: new DrawnControls(layers, 3) };
    case 'quest':
      return { readSelector: new QuestSelector({ tokenBudget: 8, pageSize: 4, denseLayers: 0 }) };
    case 'gate':
      return { eviction: new TopGatePolicy(gate, size) };
  }
}

/**
 * What the request generates alone: `generate()` over its one prompt with its seed, sampling,
 * stop conditions and policies, and the batcher's prefill chunk.
 */
export async function generateAlone(
  model: DecoderModel,
  request: BatchRequest,
  prefillChunk: number,
): Promise<{ tokens: number[]; logProbs: number[]; finishReason: string }> {
  const policies = request.policies ?? {};
  const result = await generate({
    model,
    prompts: [request.prompt],
    maxNewTokens: request.maxNewTokens,
    prefillChunk,
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.sampling === undefined ? {} : { sampling: request.sampling }),
    ...(request.stop === undefined ? {} : { stop: request.stop }),
    ...(policies.eviction === undefined ? {} : { eviction: policies.eviction }),
    ...(policies.compute === undefined ? {} : { compute: policies.compute }),
    ...(policies.readSelector === undefined ? {} : { readSelector: policies.readSelector }),
  });
  return {
    tokens: Array.from(result.tokens[0]!),
    logProbs: Array.from(result.logProbs[0]!),
    finishReason: result.finishReasons[0]!,
  };
}

/** Resolves after `turns` turns of the event loop (`setImmediate`). */
export async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}
