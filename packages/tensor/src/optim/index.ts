// Optimisation primitives shared by Lethe's trainers (SFT in @lethe/model, GRPO in @lethe/rl-grpo).

export { AdamW, type AdamWOptions, type AdamWState } from './adamw';
export { type ClippedGradients, clipByGlobalNorm, globalNorm } from './clip';
