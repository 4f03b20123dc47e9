import { LetheError } from '@lethe/core';
import { policyLoss } from '@lethe/rl-grpo';
import { type AdamW, clipByGlobalNorm, tf } from '@lethe/tensor';
import { BUDGET_FEATURES } from '../budget/episode-budget';
import type { ControllerTensorName } from '../controller/controller-parameters';
import type { ControllerGraph } from './controller-graph';
import type { ControllerBatch } from './controller-inputs';
import type { ScheduleSteps } from './recording-policy';

/** Hyper-parameters of one {@link grpoUpdate}. */
export interface GrpoUpdateOptions {
  /** The temperature the actions were sampled at: log-probabilities use `logits / temperature`. */
  readonly temperature: number;
  /** PPO clip range ε (App. B: 0.2). */
  readonly clipRange: number;
  /** Weight of the entropy bonus (App. B: 0.05). */
  readonly entropyCoefficient: number;
  /** AdamW learning rate. */
  readonly lr: number;
  /** Global gradient-norm bound (App. B: 2.0). */
  readonly maxGradNorm: number;
  /** Update number, for error messages. */
  readonly step: number;
}

/** What one update measured. */
export interface GrpoUpdateResult {
  /** The clipped surrogate loss with the entropy bonus, before the update. */
  readonly loss: number;
  /** Mean entropy of the sampling distribution over all steps, before the update. */
  readonly entropy: number;
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
}

/**
 * The controller variables the GRPO loss trains: all but the value head's. GRPO's advantages
 * come from the group, not from a critic, so the value head (`value_head.*`) gets no gradient
 * and keeps its values; it stays in the exported controller for a later critic-based trainer.
 */
export function policyVariables(graph: ControllerGraph): Map<ControllerTensorName, tf.Variable> {
  return new Map([...graph.variables].filter(([name]) => !name.startsWith('value_head.')));
}

/**
 * One GRPO update of the controller from recorded schedules (§4): a parallel forward of
 * `graph` over the `N` schedules' recorded inputs (`[N, T, …]`), the log-probabilities of the
 * taken actions under `log_softmax(logits / temperature)` — the distribution they were sampled
 * from — and the PPO-clipped surrogate with the recorded sampling log-probabilities as the old
 * policy, the process-level `advantages` and the entropy bonus of that distribution, averaged
 * over all `N·T` steps (`policyLoss` with `token-mean`). Its gradients with respect to
 * {@link policyVariables} are clipped by global norm and applied with `optimizer` (whose
 * parameters are `graph.variables`, by tensor name). Every tensor it makes is freed, on error
 * paths too.
 *
 * @param schedules the `N` schedules, all of `T` steps and of `graph`'s sizes.
 * @param advantages `[N·T]`, row-major by schedule.
 * @throws LetheError `E_ARG` naming `schedules` when empty; `E_SHAPE` naming `schedules[i]` of
 *   another step count than the first, or `advantages` when it does not hold `N·T` values; `E_STATE` naming `loss` or `gradNorm` when either is not finite
 *   (no parameter changes); the graph's checks of the assembled batch.
 */
export async function grpoUpdate(
  graph: ControllerGraph,
  optimizer: AdamW,
  schedules: readonly ScheduleSteps[],
  advantages: Float32Array,
  options: GrpoUpdateOptions,
): Promise<GrpoUpdateResult> {
  if (schedules.length === 0) {
    throw new LetheError('E_ARG', 'must hold at least one schedule', 'schedules');
  }
  const n = schedules.length;
  const steps = schedules[0]!.actions.length;
  schedules.forEach((schedule, i) => {
    if (schedule.actions.length !== steps) {
      throw new LetheError(
        'E_SHAPE',
        `has ${schedule.actions.length} steps but schedule 0 has ${steps}`,
        `schedules[${i}]`,
      );
    }
  });
  if (advantages.length !== n * steps) {
    throw new LetheError(
      'E_SHAPE',
      `must hold N·T = ${n * steps} values, got ${advantages.length}`,
      'advantages',
    );
  }
  const { actions } = graph.config;
  const batch = scheduleBatch(schedules, graph.config.inputSize);
  const taken = new Float32Array(n * steps * actions);
  const old = new Float32Array(n * steps);
  schedules.forEach((schedule, i) => {
    for (let t = 0; t < steps; t++) {
      taken[(i * steps + t) * actions + schedule.actions[t]!] = 1;
      old[i * steps + t] = schedule.logProbs[t]!;
    }
  });
  const variables = policyVariables(graph);
  const nameOf = new Map([...variables].map(([name, variable]) => [variable.name, name]));
  const owned: tf.Tensor[] = [];
  let meanEntropy: tf.Tensor | undefined;
  try {
    const chosen = tf.tensor3d(taken, [n, steps, actions]);
    const oldLogProbs = tf.tensor2d(old, [n, steps]);
    const advantage = tf.tensor2d(advantages, [n, steps]);
    const mask = tf.ones([n, steps]);
    owned.push(chosen, oldLogProbs, advantage, mask);
    const { value, grads } = tf.variableGrads(() => {
      const { logits } = graph.forward(batch);
      const logProbabilities = tf.logSoftmax(tf.div(logits, options.temperature));
      const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logProbabilities), logProbabilities), 2));
      meanEntropy = tf.keep(tf.mean(entropy));
      owned.push(meanEntropy);
      return policyLoss(
        {
          logProbs: tf.sum(tf.mul(logProbabilities, chosen), 2),
          oldLogProbs,
          advantages: advantage,
          mask,
          entropy,
        },
        {
          clipRange: options.clipRange,
          aggregation: 'token-mean',
          entropyCoefficient: options.entropyCoefficient,
        },
      );
    }, [...variables.values()]);
    owned.push(value, ...Object.values(grads));
    const clipped = clipByGlobalNorm(
      new Map(Object.entries(grads).map(([name, grad]) => [nameOf.get(name)!, grad])),
      options.maxGradNorm,
    );
    owned.push(clipped.norm, ...clipped.grads.values());
    const [loss, entropy, gradNorm] = await Promise.all(
      [value, meanEntropy!, clipped.norm].map(async (scalar) => (await scalar.data())[0]!),
    );
    if (!(Number.isFinite(loss) && Number.isFinite(gradNorm))) {
      throw new LetheError(
        'E_STATE',
        `non-finite ${Number.isFinite(loss) ? 'gradient norm' : 'loss'} at update ${options.step} (loss ${loss}, gradient norm ${gradNorm}); no update applied`,
        Number.isFinite(loss) ? 'gradNorm' : 'loss',
      );
    }
    optimizer.applyGradients(clipped.grads, options.lr);
    return { loss, entropy: entropy!, gradNorm: gradNorm! };
  } finally {
    tf.dispose(owned);
  }
}

/** The schedules' recorded inputs as one `[N, T, …]` controller batch. */
function scheduleBatch(schedules: readonly ScheduleSteps[], inputSize: number): ControllerBatch {
  const n = schedules.length;
  const steps = schedules[0]!.actions.length;
  const hidden = new Float32Array(n * steps * inputSize);
  const embedding = new Float32Array(n * steps * inputSize);
  const budget = new Float32Array(n * steps * BUDGET_FEATURES);
  const previousActions = new Int32Array(n * steps);
  schedules.forEach((schedule, i) => {
    hidden.set(schedule.hidden, i * steps * inputSize);
    embedding.set(schedule.embedding, i * steps * inputSize);
    budget.set(schedule.budget, i * steps * BUDGET_FEATURES);
    previousActions.set(schedule.previousActions, i * steps);
  });
  return { batch: n, steps, hidden, embedding, budget, previousActions };
}
