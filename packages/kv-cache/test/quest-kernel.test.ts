import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { compileKernel } from '../scripts/compile-kernel.mjs';
import { questPageScores } from '../src/index';
import { questTopPages } from '../src/read/quest-bound';
import { QuestKernel } from '../src/read/quest-kernel';
import { QUEST_KERNEL_WASM } from '../src/read/quest-kernel-wasm';
import { laneQuestScores } from '../src/read/quest-lanes';
import { topKIndices } from '../src/selection/top-k';
import { makeQuestCase, questCaseArrays } from './quest-cases';

/** Page bounds `[pages, headDim]` (min ≤ max) and a group's queries, from a seed. */
function randomCase(pages: number, headDim: number, group: number, seed: number) {
  return questCaseArrays(makeQuestCase(pages, headDim, group, seed));
}

/**
 * Random cases of 1 to `maxPages` pages, a head dimension that is a multiple of 4 up to
 * `4·maxQuads`, and 1 to `maxGroup` query heads per KV head.
 */
function arbitraryCase(maxPages: number, maxQuads: number, maxGroup: number) {
  return fc
    .tuple(
      fc.integer({ min: 1, max: maxPages }),
      fc.integer({ min: 1, max: maxQuads }),
      fc.integer({ min: 1, max: maxGroup }),
      fc.nat(),
    )
    .map(([pages, quads, group, seed]) => ({
      pages,
      group,
      ...randomCase(pages, 4 * quads, group, seed),
    }));
}

describe('Quest bound kernel (WebAssembly SIMD)', () => {
  it('embeds exactly the bytes its WAT source compiles to', async () => {
    const compiled = await compileKernel('quest');
    expect(Buffer.from(QUEST_KERNEL_WASM, 'base64').equals(Buffer.from(compiled))).toBe(true);
  });

  it('stays under 4 KB, the most a browser compiles synchronously on its main thread', () => {
    expect(Buffer.from(QUEST_KERNEL_WASM, 'base64').length).toBeLessThan(4096);
  });

  it('loads in Node (the tests would otherwise only see the portable form)', () => {
    expect(QuestKernel.load()).toBeInstanceOf(QuestKernel);
  });

  it('is absent, not an error, where compiling WebAssembly is refused (a strict CSP)', () => {
    const refuse = vi.spyOn(WebAssembly, 'Module').mockImplementation(function refused() {
      throw new WebAssembly.CompileError('WebAssembly compilation is disallowed');
    });
    try {
      expect(QuestKernel.load()).toBeUndefined();
    } finally {
      refuse.mockRestore();
    }
  });

  it('equals the portable lane sums bit for bit, any page range, both reduces', () => {
    const kernel = QuestKernel.load()!;
    fc.assert(
      fc.property(
        arbitraryCase(40, 8, 4),
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        ({ pages, group, bounds, queries }, from, to, useMax) => {
          const firstPage = Math.min(from % pages, to % pages);
          const endPage = Math.max(from % pages, to % pages) + 1;
          const inputs = { bounds, queries, group, firstPage, endPage };
          expect(kernel.scores(inputs, useMax)).toEqual(laneQuestScores(inputs, useMax));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('grows its memory for a long cache and still scores a short one after it', () => {
    const kernel = QuestKernel.load()!;
    for (const pages of [3, 40000, 5]) {
      const inputs = { ...randomCase(pages, 16, 2, pages), group: 2, firstPage: 0, endPage: pages };
      expect(kernel.scores(inputs, true)).toEqual(laneQuestScores(inputs, true));
    }
  });

  it('is what questPageScores returns for a head dimension that is a multiple of 4', () => {
    const { bounds, queries } = randomCase(33, 8, 2, 7);
    expect(questPageScores(bounds, queries, 2, 'sum', 1, 30)).toEqual(
      QuestKernel.load()!.scores({ bounds, queries, group: 2, firstPage: 1, endPage: 30 }, false),
    );
  });

  it('chooses the top pages exactly as topKIndices over the portable scores, ties included', () => {
    const kernel = QuestKernel.load()!;
    fc.assert(
      fc.property(
        arbitraryCase(60, 4, 3),
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        ({ pages, group, bounds, queries }, from, pick, coarse) => {
          if (coarse) {
            // bounds and queries rounded to −1, 0 or 1: many pages tie
            for (const v of [bounds.min, bounds.max, queries])
              v.forEach((x, i) => (v[i] = Math.round(x / 4)));
            bounds.min.forEach((x, i) => (bounds.min[i] = Math.min(x, bounds.max[i]!)));
          }
          const firstPage = from % pages;
          const k = 1 + (pick % (pages - firstPage));
          const inputs = { bounds, queries, group, firstPage, endPage: pages };
          const expected = topKIndices(laneQuestScores(inputs, true), k);
          expect(kernel.topPages(inputs, k)).toEqual(expected);
          expect(questTopPages(inputs, k)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('chooses the top pages of a long cache after scoring a short one', () => {
    const kernel = QuestKernel.load()!;
    for (const pages of [7, 30000, 9]) {
      const inputs = { ...randomCase(pages, 16, 2, pages), group: 2, firstPage: 1, endPage: pages };
      const k = Math.ceil(pages / 4);
      expect(kernel.topPages(inputs, k)).toEqual(topKIndices(laneQuestScores(inputs, true), k));
    }
  });
});
