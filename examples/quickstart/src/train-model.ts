import {
  crossEntropyLoss,
  DecoderModel,
  type NextTokenBatch,
  type SftExample,
  SftTrainer,
  sampledBatches,
  type TrainProgress,
  warmupCosineSchedule,
} from '@lethe/model';
import { CORPUS, QUICKSTART_SEED, quickstartConfig, quickstartTokenizer } from './tiny-model';

/** Steps over which the learning rate warms up: training needs more than these. */
export const WARMUP_STEPS = 20;

/** Options of {@link trainQuickstartModel}. */
export interface TrainOptions {
  readonly steps: number;
  readonly seed?: number;
  readonly onProgress?: (progress: TrainProgress) => void;
}

/** Trains the quickstart model from scratch on the embedded corpus (next-token SFT). */
export async function trainQuickstartModel(options: TrainOptions) {
  const seed = options.seed ?? QUICKSTART_SEED;
  const tokenizer = quickstartTokenizer();
  const config = quickstartConfig(tokenizer.vocabSize);
  const model = DecoderModel.random(config, seed);
  const ids = tokenizer.encode(CORPUS);
  const window = 192;
  const examples: SftExample[] = [];
  for (let start = 0; start + window <= ids.length; start += 32) {
    examples.push({ tokens: ids.slice(start, start + window) });
  }
  const trainer = new SftTrainer<NextTokenBatch>({
    model,
    loss: (b) => crossEntropyLoss(model.forward(b.inputs).logits, b.targets, b.mask),
    batches: sampledBatches(examples, {
      batchSize: 16,
      padId: tokenizer.padId,
      vocabSize: tokenizer.vocabSize,
    }),
    steps: options.steps,
    seed,
    schedule: warmupCosineSchedule({
      peakLr: 1e-2,
      warmupSteps: WARMUP_STEPS,
      totalSteps: options.steps,
      minLrRatio: 0.05,
    }),
    optimizer: { weightDecay: 0.01 },
    clipNorm: 1,
    onProgress: options.onProgress,
  });
  const result = await trainer.train();
  trainer.dispose();
  return { model, tokenizer, config, loss: result.loss };
}
