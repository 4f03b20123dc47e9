// The typed-array controller's cost per decode step: µs per `SolController.step` and the greedy
// choice of the next action, averaged over
// whole episodes (the attention over the episode's steps grows with t), for widths 16, 32, 64 and 128,
// horizons 16 and 64, and the action sets 3L (27 actions) and FL (1,560: the policy head
// dominates). The LM's hidden size is 64, the project's task models'. Median (and fastest) of 7
// timed rounds of ≥ 4,000 steps each, after a warm-up, all in this one run.
//
//   npm run bench:controller        (from packages/policies-sol)
import { Rng } from '@lethe/core';
import {
  BUDGET_FEATURES,
  type ControllerStepInput,
  controllerConfig,
  controllerParameterCount,
  greedyAction,
  initControllerParameters,
  NO_PREVIOUS_ACTION,
  SolController,
} from '../src/index';

const INPUT_SIZE = 64;
const ROUNDS = 7;
const STEPS_PER_ROUND = 4_000;
const INPUTS = 64;

function inputs(
  rng: Rng,
): { hidden: Float32Array; embedding: Float32Array; budget: Float32Array }[] {
  return Array.from({ length: INPUTS }, () => ({
    hidden: rng.normal(INPUT_SIZE, 0, 3),
    embedding: rng.normal(INPUT_SIZE, 0, 0.05),
    budget: rng.uniform(BUDGET_FEATURES),
  }));
}

/** µs per step: median and fastest round. */
function time(width: number, horizon: number, actions: number) {
  const config = controllerConfig({ inputSize: INPUT_SIZE, actions, width, maxHorizon: horizon });
  const controller = new SolController(initControllerParameters(config, { seed: 1 }));
  const pool = inputs(new Rng(2));
  const episode = controller.newEpisode();
  const episodes = Math.ceil(STEPS_PER_ROUND / horizon);
  let sink = 0;
  const round = () => {
    let k = 0;
    const start = performance.now();
    for (let e = 0; e < episodes; e++) {
      episode.reset();
      let previousAction = NO_PREVIOUS_ACTION;
      for (let t = 0; t < horizon; t++) {
        const input: ControllerStepInput = { ...pool[k++ % INPUTS]!, previousAction };
        const { logits, value } = controller.step(episode, input);
        previousAction = greedyAction(logits);
        sink += value;
      }
    }
    return ((performance.now() - start) * 1000) / (episodes * horizon);
  };
  round(); // warm-up
  const times = Array.from({ length: ROUNDS }, round).sort((a, b) => a - b);
  if (!Number.isFinite(sink)) throw new Error('non-finite values');
  return {
    median: times[ROUNDS >> 1]!,
    fastest: times[0]!,
    parameters: controllerParameterCount(config),
  };
}

console.log(
  `SOL controller step (typed arrays), LM hidden size ${INPUT_SIZE}, Node ${process.version}`,
);
console.log('| width | actions | horizon | parameters | µs / step (median) | fastest round |');
console.log('|--:|--:|--:|--:|--:|--:|');
for (const actions of [27, 1560]) {
  for (const width of [16, 32, 64, 128]) {
    for (const horizon of [16, 64]) {
      const { median, fastest, parameters } = time(width, horizon, actions);
      console.log(
        `| ${width} | ${actions} | ${horizon} | ${parameters.toLocaleString('en')} | ${median.toFixed(1)} | ${fastest.toFixed(1)} |`,
      );
    }
  }
}
