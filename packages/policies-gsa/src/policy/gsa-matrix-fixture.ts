import type { PolicyDirectoryContents, PolicyModelShape } from '@lethe/kv-cache';
import { initGateParameters } from '../gate/init-gate-parameters';
import { gsaPolicyContents } from './gsa-policy-contents';

/**
 * GSA's test directory for the shared policy matrix (`policyMatrixCases` of
 * `@lethe/model/testing`): a per-KV-head gate sized for `shape` with seeded random weights and
 * biases around g ≈ ½ (so the gates differ between tokens and heads), one sink and a window of 2
 * (the matrix's capacities are 8–12).
 */
export function gsaMatrixFixture(shape: PolicyModelShape): PolicyDirectoryContents {
  const gate = initGateParameters(shape, 'head', { seed: 9, scale: 0.8 });
  return gsaPolicyContents(gate, { options: { sinks: 1, window: 2 } });
}
