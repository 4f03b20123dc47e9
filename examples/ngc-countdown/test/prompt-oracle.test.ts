import type { LayerObservation, RandomSource } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { PromptOraclePolicy, problemPositions } from '../src/prompt-oracle';

const PROMPT = 'numbers: 23 4 25\ntarget: 44\n';
const NO_RANDOM: RandomSource = {
  fillUniform: () => {
    throw new Error('the oracle must not draw');
  },
};

/** One KV head holding `positions` (oldest first). */
function observation(positions: number[]): LayerObservation {
  const step = Math.max(...positions) + 1;
  return {
    layer: 0,
    kvHeads: 1,
    queryHeads: 1,
    headDim: 1,
    step,
    liveCounts: Int32Array.of(positions.length),
    maxLive: positions.length,
    positions: Int32Array.from(positions),
    ages: Int32Array.from(positions, (p) => step - p),
    window: 0,
  };
}

describe('problemPositions', () => {
  it('marks the numbers list and the target, shifted past a BOS token', () => {
    const marked = (encodedLength: number) =>
      problemPositions(PROMPT, encodedLength).flatMap((m, p) => (m ? [p] : []));
    // "numbers: " is 9 characters, "23 4 25" 7, "\ntarget: " 9: "44" is at 25 and 26.
    expect(marked(PROMPT.length)).toEqual([9, 10, 11, 12, 13, 14, 15, 25, 26]);
    expect(marked(PROMPT.length + 1)).toEqual([0, 10, 11, 12, 13, 14, 15, 16, 26, 27]);
  });

  it('refuses another prompt or a shorter encoding', () => {
    expectLetheError(() => problemPositions('hello\n', 6), 'E_ARG', 'prompt');
    expectLetheError(() => problemPositions(PROMPT, 10), 'E_ARG', 'encodedLength');
  });
});

describe('PromptOraclePolicy', () => {
  it('keeps the problem tokens first, then the newest entries, on its rounds', () => {
    const problem = problemPositions(PROMPT, PROMPT.length);
    const policy = new PromptOraclePolicy(problem, 0.5, 16);
    const positions = Array.from({ length: 40 }, (_, p) => p);
    const decision = policy.select(observation(positions), NO_RANDOM);
    const keep = decision.granularity === 'head' ? [...decision.keep[0]!] : [];
    // ⌈0.5 · 40⌉ = 20 kept: the 9 problem tokens and the 11 newest (29…39).
    const problemTokens = [9, 10, 11, 12, 13, 14, 15, 25, 26];
    const newest = Array.from({ length: 11 }, (_, i) => 29 + i);
    expect(keep.map((i) => positions[i]).sort((a, b) => a - b)).toEqual([
      ...problemTokens,
      ...newest,
    ]);
    expect(
      policy.shouldEvict({ layer: 0, step: 16, liveCounts: Int32Array.of(16), sinceLastRound: 16 }),
    ).toBe(true);
    expect(
      policy.shouldEvict({ layer: 0, step: 20, liveCounts: Int32Array.of(20), sinceLastRound: 4 }),
    ).toBe(false);
  });
});
