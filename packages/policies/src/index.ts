/**
 * `@lethe/policies`: every Lethe policy in one registry — {@link DEFAULT_PROVIDERS} and
 * {@link createDefaultRegistry} — and the contract of the store learned policies' directories
 * are read from ({@link PolicyStore}). Browser-safe and free of tensor libraries; the store over
 * directories on disk is `nodePolicyStore` of `@lethe/policies/node`.
 *
 * @packageDocumentation
 */
export { createDefaultRegistry, DEFAULT_PROVIDERS } from './default-registry';
export type { PolicyModel, PolicyStore } from './policy-store';
