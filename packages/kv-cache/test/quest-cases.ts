import type { PageKeyBounds } from '../src/read/page-key-bounds';
import { questPageScores, questTopPages } from '../src/read/quest-bound';
import { QuestKernel } from '../src/read/quest-kernel';
import { mulberry32 } from './helpers';

/** One Quest scoring case as plain numbers (what crosses into a browser page). */
export interface QuestCase {
  readonly pages: number;
  readonly min: number[];
  readonly max: number[];
  readonly queries: number[];
  readonly group: number;
  readonly k: number;
}

/** Random page bounds `[pages, headDim]` and a group's queries, float32 values; k = ⌈pages/4⌉. */
export function makeQuestCase(
  pages: number,
  headDim: number,
  group: number,
  seed: number,
): QuestCase {
  const random = mulberry32(seed);
  const draw = () => Math.fround(random() * 8 - 4);
  const a = Array.from({ length: pages * headDim }, draw);
  const b = Array.from({ length: pages * headDim }, draw);
  return {
    pages,
    min: a.map((x, i) => Math.min(x, b[i]!)),
    max: a.map((x, i) => Math.max(x, b[i]!)),
    queries: Array.from({ length: group * headDim }, draw),
    group,
    k: Math.ceil(pages / 4),
  };
}

/** A case's page bounds and queries as the typed arrays the scoring functions take. */
export function questCaseArrays(c: QuestCase): { bounds: PageKeyBounds; queries: Float32Array } {
  return {
    bounds: { pages: c.pages, min: Float32Array.from(c.min), max: Float32Array.from(c.max) },
    queries: Float32Array.from(c.queries),
  };
}

/** A case's max- and sum-reduced scores and top pages, as plain arrays. */
export function runQuestCase(c: QuestCase) {
  const { bounds, queries } = questCaseArrays(c);
  return {
    max: Array.from(questPageScores(bounds, queries, c.group, 'max')),
    sum: Array.from(questPageScores(bounds, queries, c.group, 'sum')),
    top: Array.from(
      questTopPages({ bounds, queries, group: c.group, firstPage: 0, endPage: c.pages }, c.k),
    ),
  };
}

/** Whether the SIMD kernel runs here. */
export function kernelRuns(): boolean {
  return QuestKernel.load() !== undefined;
}
