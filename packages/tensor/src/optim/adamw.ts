import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';
import { tf } from '../tf';

/** Hyper-parameters of {@link AdamW}; every field is optional (PyTorch defaults). */
export interface AdamWOptions {
  /** Decay of the first-moment average, in [0, 1). Default 0.9. */
  readonly beta1?: number;
  /** Decay of the second-moment average, in [0, 1). Default 0.999. */
  readonly beta2?: number;
  /** Added to `sqrt(v̂)` in the denominator, > 0. Default 1e-8. */
  readonly epsilon?: number;
  /** Decoupled weight decay λ ≥ 0; each update multiplies a parameter by `1 − lr·λ`. Default 0.01. */
  readonly weightDecay?: number;
  /**
   * Parameters (by name) that get no weight decay, e.g. `isNormOrBias` from `@lethe/model`.
   * Default: none excluded.
   */
  readonly excludeFromWeightDecay?: (name: string) => boolean;
}

/** Optimizer state as plain arrays, for checkpoints. */
export interface AdamWState {
  /** Number of updates applied so far. */
  readonly step: number;
  /** First-moment estimate per parameter name (row-major, the parameter's shape). */
  readonly m: ReadonlyMap<string, Float32Array>;
  /** Second-moment estimate per parameter name. */
  readonly v: ReadonlyMap<string, Float32Array>;
}

interface Slot {
  readonly param: tf.Variable;
  readonly m: tf.Variable;
  readonly v: tf.Variable;
  readonly decays: boolean;
}

/**
 * Adam with decoupled weight decay (Loshchilov & Hutter, "Decoupled Weight Decay
 * Regularization"), following PyTorch's `torch.optim.AdamW`. For update `t = step + 1`:
 *
 * ```
 * p ← p · (1 − lr·λ)                      (skipped for excluded names)
 * m ← β1·m + (1 − β1)·g
 * v ← β2·v + (1 − β2)·g²
 * p ← p − (lr / (1 − β1^t)) · m / (sqrt(v) / sqrt(1 − β2^t) + ε)
 * ```
 *
 * The moments live in non-trainable `tf.Variable`s; updates are tf ops, so they run on the active
 * backend. A parameter without a gradient in an update is left unchanged (its moments too), as in
 * PyTorch; the bias correction uses the optimizer's global step.
 *
 * @example
 * ```ts
 * const opt = new AdamW(model.parameters, { weightDecay: 0.1, excludeFromWeightDecay: isNormOrBias });
 * const { value, grads } = tf.variableGrads(lossFn);
 * opt.applyGradients(new Map(Object.entries(grads)), 1e-3);
 * ```
 */
export class AdamW {
  /** β1. */
  readonly beta1: number;
  /** β2. */
  readonly beta2: number;
  /** ε. */
  readonly epsilon: number;
  /** λ. */
  readonly weightDecay: number;
  private readonly slots = new Map<string, Slot>();
  private updates = 0;
  private disposed = false;

  /**
   * @param parameters the variables to optimize, by name (e.g. a model's `parameters`).
   * @throws LetheError `E_ARG` naming the offending hyper-parameter, or `parameters` when empty.
   */
  constructor(parameters: ReadonlyMap<string, tf.Variable>, options: AdamWOptions = {}) {
    const { beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, weightDecay = 0.01 } = options;
    this.beta1 = assertBeta(beta1, 'beta1');
    this.beta2 = assertBeta(beta2, 'beta2');
    assertFiniteInRange(epsilon, 'epsilon');
    if (epsilon <= 0) throw new LetheError('E_ARG', `must be > 0, got ${epsilon}`, 'epsilon');
    this.epsilon = epsilon;
    this.weightDecay = assertFiniteInRange(weightDecay, 'weightDecay', 0);
    if (parameters.size === 0) throw new LetheError('E_ARG', 'no parameters', 'parameters');
    const excluded = options.excludeFromWeightDecay ?? (() => false);
    for (const [name, param] of parameters) {
      if (param.dtype !== 'float32') {
        throw new LetheError('E_DTYPE', `must be float32, got ${param.dtype}`, name);
      }
      // tidy frees the zero tensors the variables were initialised from.
      this.slots.set(name, {
        param,
        m: tf.tidy(() => tf.variable(tf.zerosLike(param), false)),
        v: tf.tidy(() => tf.variable(tf.zerosLike(param), false)),
        decays: !excluded(name),
      });
    }
  }

  /** Number of updates applied so far (the next update uses bias correction `t = step + 1`). */
  get step(): number {
    return this.updates;
  }

  /**
   * Applies one update with learning rate `lr` and advances the step. `grads` holds one gradient
   * per parameter name (missing names are skipped this update). The gradients are not disposed.
   *
   * @throws LetheError `E_ARG` for a bad `lr` or an unknown gradient name, `E_SHAPE` for a
   * gradient whose shape differs from its parameter, `E_STATE` after {@link AdamW.dispose}.
   */
  applyGradients(grads: ReadonlyMap<string, tf.Tensor>, lr: number): void {
    this.assertLive();
    assertFiniteInRange(lr, 'lr', 0);
    for (const [name, g] of grads) {
      const slot = this.slots.get(name);
      if (slot === undefined)
        throw new LetheError('E_ARG', `no parameter named "${name}"`, 'grads');
      if (!sameShape(g.shape, slot.param.shape)) {
        throw new LetheError(
          'E_SHAPE',
          `gradient shape [${g.shape}] differs from parameter [${slot.param.shape}]`,
          name,
        );
      }
    }
    const t = this.updates + 1;
    const stepSize = lr / (1 - this.beta1 ** t);
    const sqrtCorrection2 = Math.sqrt(1 - this.beta2 ** t);
    const decayFactor = 1 - lr * this.weightDecay;
    tf.tidy(() => {
      for (const [name, g] of grads) {
        const { param, m, v, decays } = this.slots.get(name)!;
        const grad = tf.cast(g, 'float32');
        const m1 = tf.add(tf.mul(m, this.beta1), tf.mul(grad, 1 - this.beta1));
        const v1 = tf.add(tf.mul(v, this.beta2), tf.mul(tf.square(grad), 1 - this.beta2));
        const decayed = decays ? tf.mul(param, decayFactor) : param;
        const denom = tf.add(tf.div(tf.sqrt(v1), sqrtCorrection2), this.epsilon);
        param.assign(tf.sub(decayed, tf.mul(tf.div(m1, denom), stepSize)));
        m.assign(m1);
        v.assign(v1);
      }
    });
    this.updates = t;
  }

  /** Copies the state (step and both moments) to host memory. */
  async exportState(): Promise<AdamWState> {
    this.assertLive();
    const m = new Map<string, Float32Array>();
    const v = new Map<string, Float32Array>();
    for (const [name, slot] of this.slots) {
      // Copies: some backends hand out their internal buffer.
      m.set(name, Float32Array.from(await slot.m.data()));
      v.set(name, Float32Array.from(await slot.v.data()));
    }
    return { step: this.updates, m, v };
  }

  /**
   * Replaces the state with `state` (e.g. from a checkpoint). The state must hold exactly this
   * optimizer's parameter names with matching sizes.
   *
   * @throws LetheError `E_CHECKPOINT` on missing, extra or mis-sized moments, `E_ARG` for a bad step.
   */
  importState(state: AdamWState): void {
    this.assertLive();
    assertInteger(state.step, 'state.step', 0);
    for (const [label, moments] of [
      ['m', state.m],
      ['v', state.v],
    ] as const) {
      for (const name of moments.keys()) {
        if (!this.slots.has(name)) {
          throw new LetheError('E_CHECKPOINT', `unknown parameter "${name}"`, `state.${label}`);
        }
      }
      for (const [name, slot] of this.slots) {
        const values = moments.get(name);
        if (values === undefined) {
          throw new LetheError('E_CHECKPOINT', `missing parameter "${name}"`, `state.${label}`);
        }
        if (values.length !== slot.param.size) {
          throw new LetheError(
            'E_CHECKPOINT',
            `"${name}" has ${values.length} values, parameter has ${slot.param.size}`,
            `state.${label}`,
          );
        }
      }
    }
    tf.tidy(() => {
      for (const [name, slot] of this.slots) {
        slot.m.assign(tf.tensor(state.m.get(name)!, slot.param.shape, 'float32'));
        slot.v.assign(tf.tensor(state.v.get(name)!, slot.param.shape, 'float32'));
      }
    });
    this.updates = state.step;
  }

  /** Frees the moment variables; the optimizer cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    for (const slot of this.slots.values()) {
      slot.m.dispose();
      slot.v.dispose();
    }
    this.disposed = true;
  }

  private assertLive(): void {
    if (this.disposed) throw new LetheError('E_STATE', 'optimizer was disposed', 'AdamW');
  }
}

function assertBeta(value: number, argument: string): number {
  assertFiniteInRange(value, argument, 0, 1);
  if (value >= 1) throw new LetheError('E_ARG', `must be < 1, got ${value}`, argument);
  return value;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
