import { LetheError } from '@lethe/core';
import {
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  ScorerPolicy,
} from '@lethe/kv-cache';

/**
 * Which prompt tokens state the problem: the characters of the numbers list (digits and the
 * spaces between them) and of the target, plus a BOS token when the encoding has one (the
 * first `encodedLength − prompt.length` positions). Labels (`numbers: `, `target: `) and line
 * breaks are not.
 *
 * @throws LetheError `E_ARG` naming `prompt` when it is not a Countdown prompt, `encodedLength`
 *   when it is shorter than the prompt.
 */
export function problemPositions(prompt: string, encodedLength: number): boolean[] {
  const match = /^numbers: ([0-9 ]+)\ntarget: ([0-9]+)\n$/.exec(prompt);
  if (match === null) throw new LetheError('E_ARG', 'is not a Countdown prompt', 'prompt');
  const offset = encodedLength - prompt.length;
  if (offset < 0) {
    throw new LetheError(
      'E_ARG',
      `${encodedLength} is shorter than the prompt (${prompt.length} characters)`,
      'encodedLength',
    );
  }
  const problem = Array.from({ length: encodedLength }, (_, p) => p < offset);
  const mark = (from: number, text: string) => {
    for (let i = 0; i < text.length; i++) problem[offset + from + i] = true;
  };
  mark('numbers: '.length, match[1]!);
  mark(prompt.indexOf('target: ') + 'target: '.length, match[2]!);
  return problem;
}

/** Score offset that puts every problem token above every other entry. */
const PROBLEM_BONUS = 1e6;

/**
 * A task-aware reference, not a method: it knows which prompt tokens state the problem
 * ({@link problemPositions}) and keeps them first, then the newest entries — the cache a
 * policy would keep if it knew what a Countdown solution needs (the numbers and the target)
 * and otherwise trusted recency. Same rounds and per-head fraction as the heuristics of the
 * comparison (`evaluationSweeps`), so it shows what *selection alone* can reach on a model at a rate.
 * It serves one sequence (its prompt): evaluate with batches of one.
 */
export class PromptOraclePolicy extends ScorerPolicy {
  readonly name = 'prompt-oracle';
  readonly needs: ObservationNeeds = NO_NEEDS;

  /**
   * @param problem per prompt position, whether it states the problem ({@link problemPositions}).
   * @param rate eviction rate ε per round; a round keeps ⌈(1 − ε)·live⌉ entries per KV head.
   * @param cadence rounds every `cadence` tokens.
   */
  constructor(
    private readonly problem: readonly boolean[],
    rate: number,
    cadence: number,
  ) {
    super({ budget: { keepRatio: 1 - rate }, trigger: { every: cadence } });
  }

  /** Problem tokens score above everything (older first among them), the rest by recency. */
  score(observation: LayerObservation): Float32Array {
    const { positions } = observation;
    const scores = new Float32Array(positions.length);
    for (let k = 0; k < positions.length; k++) {
      const p = positions[k]!;
      scores[k] = this.problem[p] === true ? PROBLEM_BONUS - p : p;
    }
    return scores;
  }
}
