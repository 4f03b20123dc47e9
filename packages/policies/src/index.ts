/**
 * `@lethe/policies`: every Lethe policy in one registry — {@link DEFAULT_PROVIDERS} and
 * {@link createDefaultRegistry} — the contract of the store learned policies' directories are
 * read from ({@link PolicyStore}) and a store over `ModelFiles` of `@lethe/model`, for a web
 * page reading them over HTTP or from picked files ({@link filesPolicyStore}). Browser-safe and
 * free of tensor libraries; the store over directories on disk is `nodePolicyStore` of
 * `@lethe/policies/node`.
 *
 * @packageDocumentation
 */
export { createDefaultRegistry, DEFAULT_PROVIDERS } from './default-registry';
export { filesPolicyStore, type ReadPolicyModel } from './files-policy-store';
export { policyModelDirectory } from './policy-model-directory';
export type { PolicyModel, PolicyStore } from './policy-store';
