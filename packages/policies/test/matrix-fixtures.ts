import {
  type AnyPolicyProvider,
  memoryPolicyDirectory,
  type PolicyModelShape,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import type { MatrixMode, PolicyFixture } from '@lethe/model/testing';
import { gsaMatrixFixture } from '@lethe/policies-gsa';
import { nammMatrixFixture } from '@lethe/policies-namm';
import { ngcMatrixFixture } from '@lethe/policies-ngc';
import { solMatrixFixture } from '@lethe/policies-sol';
import { createDefaultRegistry } from '../src/default-registry';

/** The test directory of each learned default provider, as its own package exports it. */
export const MATRIX_FIXTURES: Readonly<Record<string, PolicyFixture>> = {
  gsa: gsaMatrixFixture,
  namm: nammMatrixFixture,
  ngc: ngcMatrixFixture,
  sol: solMatrixFixture,
};

const registry = createDefaultRegistry();

/**
 * Prepares `provider` in `mode` from the default registry, a learned one from its fixture
 * directory for a model of `shape`.
 */
export function prepareDefault(
  provider: AnyPolicyProvider,
  mode: MatrixMode,
  shape: PolicyModelShape,
): Promise<PreparedPolicy> {
  const fixture = MATRIX_FIXTURES[provider.name];
  const directory = fixture === undefined ? undefined : memoryPolicyDirectory(fixture(shape));
  return registry.prepare(provider.name, { options: mode.options, directory });
}
