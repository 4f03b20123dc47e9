/**
 * `@lethe/policies-gsa/train/node`: the Node-only part of GSA training — writing a trained gate
 * as the policy directory the registry's `gsa` provider loads ({@link writeGsaPolicyDirectory}).
 * Checkpoints go through `@lethe/model/train/node`'s `directoryCheckpointStore`.
 *
 * @packageDocumentation
 */
export { type GsaManifestOptions, writeGsaPolicyDirectory } from './policy-directory-writer';
