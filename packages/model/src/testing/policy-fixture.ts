import type { PolicyDirectoryContents, PolicyModelShape } from '@lethe/kv-cache';

/**
 * A learned provider's test directory for a model of `shape` (a gate or controller is sized by
 * it): what the policy matrix loads the provider from, as `memoryPolicyDirectory` serves it. Each
 * learned policy package exports its own, with parameters that make its decisions vary (not a
 * zero genome that keeps everything).
 */
export type PolicyFixture = (shape: PolicyModelShape) => PolicyDirectoryContents;
