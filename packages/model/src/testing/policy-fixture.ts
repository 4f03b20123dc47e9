import {
  type AnyPolicyProvider,
  memoryPolicyDirectory,
  type PolicyDirectoryContents,
  type PolicyModelShape,
  PolicyRegistry,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import type { MatrixMode } from './matrix-modes';

/**
 * A learned provider's test directory for a model of `shape` (a gate or controller is sized by
 * it): what the policy matrix loads the provider from, as `memoryPolicyDirectory` serves it. Each
 * learned policy package exports its own, with parameters that make its decisions vary (not a
 * zero genome that keeps everything).
 */
export type PolicyFixture = (shape: PolicyModelShape) => PolicyDirectoryContents;

/**
 * Prepares `provider` with `mode`'s options, a learned one from `fixture`'s directory for a model
 * of `shape`.
 */
export function prepareInMode(
  provider: AnyPolicyProvider,
  mode: MatrixMode,
  fixture: PolicyFixture | undefined,
  shape: PolicyModelShape,
): Promise<PreparedPolicy> {
  const directory = fixture === undefined ? undefined : memoryPolicyDirectory(fixture(shape));
  return new PolicyRegistry([provider]).prepare(provider.name, {
    options: mode.options,
    directory,
  });
}
