/**
 * `@lethe/policies-namm`: Neural Attention Memory Models (Cetin et al., ICLR 2025) for inference.
 * Each cached token's attention column becomes a spectrogram (STFT, EMA: {@link LayerSpectrogram}),
 * its features (normalised spectrogram and age embedding: {@link writeTokenFeatures}) are scored
 * by a tiny network shared by every layer and head — backward attention ({@link BamScorer}) or an
 * MLP ({@link MlpScorer}), one flat genome ({@link describeGenome}) — and entries scoring below
 * zero are evicted ({@link NammPolicy}, {@link nammProvider}). Plain typed arrays: this entry
 * loads no tensor library.
 *
 * @packageDocumentation
 */
export * from './features/age-embedding';
export * from './features/feature-bound';
export * from './features/head-memory';
export * from './features/layer-spectrogram';
export * from './features/spectrogram-ema';
export * from './features/stft';
export * from './features/token-features';
export * from './policy/namm-matrix-fixture';
export * from './policy/namm-parameters';
export * from './policy/namm-policy';
export * from './policy/namm-policy-contents';
export * from './policy/namm-provider';
export * from './scorer/bam-scorer';
export * from './scorer/genome-layout';
export * from './scorer/magnitude-bound';
export * from './scorer/mlp-scorer';
export * from './scorer/scorer';
export * from './scorer/scorer-spec';
