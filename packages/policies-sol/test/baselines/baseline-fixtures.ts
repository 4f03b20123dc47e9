import { Rng } from '@lethe/core';
import type { ComputePolicy, LayerControls, StepObservation } from '@lethe/kv-cache';
import { expect } from 'vitest';
import type { AxisUsage } from '../../src/actions/action-set';

/** `[κ, ρ, q/16]` of one step's controls: every layer the same, a missing knob dense. */
export function usageOf(controls: readonly (LayerControls | undefined)[]): AxisUsage {
  const first = controls[0];
  for (const layer of controls) expect(layer).toBe(first);
  return [first?.tokenKeep ?? 1, first?.mlpInputKeep ?? 1, (first?.activationBits ?? 16) / 16];
}

/** Options of {@link runSequence}. */
export interface RunOptions {
  /** The sequence's random stream (`new Rng(seed).fork('policy')`, as the matrix's loop). */
  readonly seed: number;
  /** Decode steps. */
  readonly steps: number;
  /** Position of the first step (default 10: every step effective under the default 6). */
  readonly firstStep?: number;
  /** Layers of the observed model (default 2). */
  readonly layers?: number;
  /** Width of the hidden state and embedding (default 6). */
  readonly width?: number;
  /** Vocabulary of the logits (default 12). */
  readonly vocab?: number;
}

/** A random observation of step `step`, with an embedding and the previous step's logits. */
export function randomObservation(
  data: Rng,
  step: number,
  layers: number,
  width: number,
  vocab: number,
): StepObservation & { readonly logits: Float32Array } {
  return {
    step,
    token: Math.floor(data.uniform(1)[0]! * vocab),
    hidden: data.normal(width),
    embedding: data.normal(width),
    logits: data.normal(vocab, 0, 3),
    livePerLayer: new Int32Array(layers).fill(2 * step),
  };
}

/**
 * Runs one sequence of `policy` (its own state and random stream) over random observations and
 * returns each step's usage.
 */
export function runSequence(policy: ComputePolicy, options: RunOptions): AxisUsage[] {
  const { seed, steps, firstStep = 10, layers = 2, width = 6, vocab = 12 } = options;
  const data = new Rng(seed);
  const choices = new Rng(seed).fork('policy');
  const state = policy.createState?.();
  return Array.from({ length: steps }, (_, t) => {
    const observation = randomObservation(data, firstStep + t, layers, width, vocab);
    const controls = policy.controls(observation, choices, state);
    expect(controls.length).toBe(layers);
    return usageOf(controls);
  });
}

/** The mean of `values` per axis. */
export function meanUsage(values: readonly AxisUsage[]): number[] {
  return [0, 1, 2].map((axis) => values.reduce((sum, u) => sum + u[axis]!, 0) / values.length);
}
