import type { AnyPolicyProvider } from '@lethe/kv-cache';
import { h2oProvider } from './h2o';
import { keyDiffProvider } from './keydiff';
import { knormProvider } from './knorm';
import { l2NormProvider } from './l2-norm';
import { questProvider } from './quest-provider';
import { randomProvider } from './random';
import { snapKVProvider } from './snapkv';
import { streamingLlmProvider } from './streaming-llm';
import { tovaProvider } from './tova';

/**
 * Every heuristic as a provider, in the order reports list them: the eviction policies, then
 * Quest's read selector (`questProvider`, read budgets only). Give them to a `PolicyRegistry`
 * (with `fullCacheProvider`) to reach them by name; a new heuristic joins the CLI, sweeps, the
 * main job and the shared test matrix by being added here.
 */
export const HEURISTIC_PROVIDERS: readonly AnyPolicyProvider[] = Object.freeze([
  streamingLlmProvider,
  h2oProvider,
  snapKVProvider,
  tovaProvider,
  knormProvider,
  keyDiffProvider,
  l2NormProvider,
  randomProvider,
  questProvider,
]);

/** The names of {@link HEURISTIC_PROVIDERS}, in order. */
export const HEURISTIC_NAMES: readonly string[] = Object.freeze(
  HEURISTIC_PROVIDERS.map((provider) => provider.name),
);
