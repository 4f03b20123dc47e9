/**
 * `@lethe/policies-gsa`: Octopus / Gated Selective Attention (GSA) at inference. A small gate
 * network per layer (`Linear(D, D) → SiLU → Linear(D, kvHeads) → sigmoid`) gives every token a
 * utility `g ∈ (0, 1)` per KV head when it is written; the model adds `log g` to the attention
 * logits, and the cache keeps the sinks, a recent window and the entries of the highest `g`.
 *
 * The gate runs on tfjs (`GsaGate` of `@lethe/policies-gsa/train`, the `AttentionGate` a runtime
 * calls) and as plain typed arrays ({@link gateValues}, for runtimes without a tensor library);
 * {@link GsaPolicy} ranks the stored gates and {@link gsaProvider} loads a trained gate from a
 * policy directory (and the tfjs gate with it, by a dynamic import: this entry itself loads no
 * tensor library; `@lethe/tensor` and `@lethe/model` are optional peers).
 *
 * @packageDocumentation
 */
export {
  checkGateParameters,
  checkGateShape,
  type GateModule,
  type GsaGateParameters,
  type GsaGateShape,
} from './gate/gate-parameters';
export {
  decodeGsaParameters,
  type EncodedGsaParameters,
  encodeGsaParameters,
  GSA_TENSORS_FILE,
  type GsaGateHeader,
  gateTensorName,
} from './gate/gate-safetensors';
export { gateLogits, gateValues } from './gate/gate-values';
export {
  checkGranularity,
  GATE_GRANULARITIES,
  type GateGranularity,
  gateModuleCount,
  gateModuleOf,
  gateOutputs,
} from './gate/granularity';
export type { GsaGate } from './gate/gsa-gate';
export { type GateInitOptions, initGateParameters } from './gate/init-gate-parameters';
export { logSigmoid } from './gate/log-sigmoid';
export { gsaMatrixFixture } from './policy/gsa-matrix-fixture';
export { GsaPolicy, type GsaPolicyOptions } from './policy/gsa-policy';
export { type GsaPolicyRecord, gsaPolicyContents } from './policy/gsa-policy-contents';
export {
  GSA_DEFAULT_SINKS,
  GSA_DEFAULT_WINDOW,
  type GsaLoaded,
  gsaProvider,
} from './policy/gsa-provider';
