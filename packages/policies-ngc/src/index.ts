/**
 * `@lethe/policies-ngc`: the inference side of Neural Garbage Collection (NGC) — a language model
 * that evicts its own KV cache using its attention as the eviction policy. Attention of the most
 * recent queries scores every live entry ({@link entryScores}), entries are grouped in blocks
 * ({@link blockScores}), block scores become logits ({@link NgcLogits}), and each eviction round
 * keeps the best blocks (evaluation) or a Gumbel-top-k draw with its exact log-probability
 * (training rollouts) — {@link NgcPolicy}, an `EvictionPolicy` of `@lethe/kv-cache`. The
 * interoception prompt tag ({@link evictionRateTag}) and the meta-token hook
 * ({@link metaTokenHook}, App. A.4) serve the trainer. This entry loads no tensor library (it
 * needs only `@lethe/kv-cache` and `@lethe/core`); the differentiable tfjs forms are in
 * `@lethe/policies-ngc/train`.
 *
 * @packageDocumentation
 */
export * from './entry-scores';
export * from './gumbel-top-k';
export * from './interoception';
export * from './logits';
export * from './meta-token';
export * from './ngc-policy';
export * from './ngc-policy-contents';
export * from './ngc-provider';
