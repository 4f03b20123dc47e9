/**
 * `@lethe/policies/node`: the {@link PolicyStore} over directories on disk (Node only; needs the
 * optional peer `@lethe/model`).
 *
 * @packageDocumentation
 */
export { nodePolicyStore } from './node-policy-store';
