/**
 * `@lethe/policies-sol/train/node`: the Node-only part of SOL's training — writing a trained
 * controller as the policy directory the registry's `sol` provider loads
 * ({@link writeSolPolicyDirectory}). Checkpoints go through `@lethe/model/node`'s
 * `directoryCheckpointStore`.
 *
 * @packageDocumentation
 */
export { writeSolPolicyDirectory } from './policy-directory-writer';
