/**
 * `@lethe/policies-sol/train`: the SOL controller as a differentiable tfjs graph
 * ({@link ControllerGraph}) — the same architecture and tensors as the inference
 * `SolController`, run over whole episodes in parallel for training. Needs the optional peer
 * dependency `@lethe/tensor`.
 *
 * @packageDocumentation
 */
export { type ControllerBatchOutput, ControllerGraph } from './controller-graph';
export type { ControllerBatch } from './controller-inputs';
