export { addLayers } from './add-layers';
export { type AttentionResult, groupedQueryAttention } from './attention';
export { type ChannelKeep, channelKeepMask } from './channel-keep';
export { DecoderModel } from './decoder-model';
export { ACTIVATION_BITS_RANGE, fakeQuantizeRows, quantizationLevels } from './fake-quant';
export { linear } from './linear';
export {
  causalVisibility,
  HIDDEN_LOGIT,
  visibilityToLogitBias,
} from './masks';
export { type MlpWeights, swiGluMlp } from './mlp';
export { resizeVocabulary } from './resize-vocabulary';
export { rmsNorm } from './rms-norm';
export { applyRope, type RopeTables, ropeInverseFrequencies, ropeTables } from './rope';
export type {
  BatchControls,
  DecodeStepOptions,
  ForwardCapture,
  ForwardOptions,
  ForwardResult,
  KeyBiasHook,
  MaskHook,
  PrefillOptions,
  StepOptions,
  StepReads,
  StepResult,
} from './types';
export {
  type DecoderWeights,
  groupWeights,
  INIT_STD,
  initialTensors,
  type LayerWeights,
  layerTensorName,
} from './weights';
export { type ModelWidths, widenModel } from './widen-model';
