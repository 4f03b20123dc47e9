import { assertInteger, assertLength, assertNoNaN, assertRecord, LetheError } from '@lethe/core';
import {
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type PageKeyBounds,
  type PageRanking,
  type QuestGroupReduce,
  questPageScores,
  type ReadSelector,
  selectTopKRequired,
} from '@lethe/kv-cache';
import { groupSize } from './observation-fields';

/** Options of {@link QuestSelector}. */
export interface QuestOptions {
  /** Tokens read per KV head per step (Quest's `token_budget`); a positive integer. */
  readonly tokenBudget: number;
  /** Live entries per page; must equal the cache's `pageSize`. Default 16. */
  readonly pageSize?: number;
  /** Fewest pages read per head. Default 3 (Quest reads `max(3, budget // page)` pages). */
  readonly minPages?: number;
  /** Leading layers that always read densely. Default 2 (Quest skips the first two layers). */
  readonly denseLayers?: number;
  /**
   * GQA: `'max'` (default) scores a page by its highest bound over the group's query heads —
   * still an upper bound of every head's `q·k`, so no head's best page is ranked below a page it
   * cannot prefer; `'sum'` adds the bounds (the group's total criticality). Quest itself was
   * defined for multi-head attention, where both are the same.
   */
  readonly groupReduce?: QuestGroupReduce;
}

/**
 * Quest (Tang et al. 2024) query-aware page selection: per KV head and page of `pageSize` live
 * entries it reads the channel-wise min and max of the keys that the cache maintains
 * (`observation.pageKeyBounds`, asked for by its `needs`; the keys themselves are not copied),
 * scores each page by the upper bound `Σ_c max(q_c·max_c, q_c·min_c)` for the current query
 * (`questPageScores` of `@lethe/kv-cache`, the same bound `@lethe/model`'s `tokenKeep` reads
 * use), and reads `max(minPages, floor(tokenBudget / pageSize))` pages: the newest page always
 * (its metadata is still filling up; Quest's page budget includes it), plus the best-scoring
 * others (ties to the older page). Layers below `denseLayers` read densely, and so does a layer
 * where every head has no more pages than the page budget (`undefined`).
 *
 * The bounds are exact whatever was evicted before: a `KVCache` recomputes the bounds of the
 * pages an eviction rewrote.
 */
export class QuestSelector implements ReadSelector {
  readonly name = 'quest';
  readonly needs: ObservationNeeds = Object.freeze({ ...NO_NEEDS, pageKeyBounds: true });
  /** Tokens read per head. */
  readonly tokenBudget: number;
  /** Live entries per page. */
  readonly pageSize: number;
  /** Fewest pages read per head. */
  readonly minPages: number;
  /** Leading layers read densely. */
  readonly denseLayers: number;
  /** GQA reduction of page scores. */
  readonly groupReduce: QuestGroupReduce;

  /** @throws LetheError `E_BUDGET` for a bad `tokenBudget`, `E_ARG` for any other bad option. */
  constructor(options: QuestOptions) {
    assertRecord(options, 'options');
    if (!(Number.isInteger(options.tokenBudget) && options.tokenBudget > 0)) {
      throw new LetheError(
        'E_BUDGET',
        `must be a positive integer, got ${options.tokenBudget}`,
        'tokenBudget',
      );
    }
    this.tokenBudget = options.tokenBudget;
    this.pageSize = assertInteger(options.pageSize ?? 16, 'pageSize', 1);
    this.minPages = assertInteger(options.minPages ?? 3, 'minPages', 1);
    this.denseLayers = assertInteger(options.denseLayers ?? 2, 'denseLayers', 0);
    this.groupReduce = options.groupReduce ?? 'max';
    if (this.groupReduce !== 'max' && this.groupReduce !== 'sum') {
      throw new LetheError(
        'E_ARG',
        `must be "max" or "sum", got "${this.groupReduce}"`,
        'groupReduce',
      );
    }
  }

  /** Pages read per head when a head has more pages than that. */
  get pageBudget(): number {
    return Math.max(this.minPages, Math.floor(this.tokenBudget / this.pageSize));
  }

  /**
   * Page scores of one KV head for the current query: per page, the upper bound for each query
   * head of the group, reduced by `groupReduce`.
   *
   * @returns `[pages]`.
   * @throws LetheError `E_ARG` naming `observation.pageKeyBounds` when it is missing or its
   *   `pageSize` is not this selector's, `E_SHAPE` naming it or `query` for a wrong length,
   *   `E_ARG` naming `query` for a NaN.
   */
  pageScores(observation: LayerObservation, query: Float32Array, head: number): Float32Array {
    const { queryHeads, headDim } = observation;
    assertLength(query, queryHeads * headDim, 'query');
    assertNoNaN(query, 'query');
    const group = groupSize(observation);
    const bounds = this.headBounds(observation, head);
    const queries = query.subarray(head * group * headDim, (head + 1) * group * headDim);
    return questPageScores(bounds, queries, group, this.groupReduce);
  }

  /** Pages to read per KV head, or `undefined` for a dense read (see the class description). */
  selectPages(
    observation: LayerObservation,
    query: Float32Array,
  ): readonly Int32Array[] | undefined {
    if (observation.layer < this.denseLayers) return undefined;
    const budget = this.pageBudget;
    const pagesPerHead = Array.from(observation.liveCounts, (live) =>
      Math.ceil(live / this.pageSize),
    );
    if (pagesPerHead.every((pages) => pages <= budget)) return undefined;
    return pagesPerHead.map((pages, head) => {
      if (pages <= budget) return Int32Array.from({ length: pages }, (_, p) => p);
      const scores = this.pageScores(observation, query, head);
      const newest = new Uint8Array(pages);
      newest[pages - 1] = 1;
      return selectTopKRequired(scores, newest, budget);
    });
  }

  /**
   * {@link QuestSelector.selectPages} as a ranking a device runs: per KV head with more pages
   * than the page budget, the newest page read whole (`middleEnd` at its start) and the best
   * `pageBudget − 1` of the older pages; other heads dense; undefined where `selectPages` reads
   * the whole layer densely.
   */
  pageRanking(layer: number, liveCounts: Int32Array): PageRanking | undefined {
    if (layer < this.denseLayers) return undefined;
    const budget = this.pageBudget;
    const pagesPerHead = Array.from(liveCounts, (live) => Math.ceil(live / this.pageSize));
    if (pagesPerHead.every((pages) => pages <= budget)) return undefined;
    return {
      reduce: this.groupReduce,
      heads: pagesPerHead.map((pages) =>
        pages <= budget
          ? undefined
          : { sinks: 0, middleEnd: (pages - 1) * this.pageSize, pages: budget - 1 },
      ),
    };
  }

  /** Head `head`'s page bounds out of the observation, checked. */
  private headBounds(observation: LayerObservation, head: number): PageKeyBounds {
    const observed = observation.pageKeyBounds;
    const argument = 'observation.pageKeyBounds';
    if (observed === undefined) {
      throw new LetheError('E_ARG', 'missing; the selector needs it (see `needs`)', argument);
    }
    if (observed.pageSize !== this.pageSize) {
      throw new LetheError(
        'E_ARG',
        `describes pages of ${observed.pageSize} entries, the selector's are ${this.pageSize}`,
        argument,
      );
    }
    const { kvHeads, headDim, liveCounts } = observation;
    const { maxPages } = observed;
    assertLength(observed.min, kvHeads * maxPages * headDim, `${argument}.min`);
    assertLength(observed.max, kvHeads * maxPages * headDim, `${argument}.max`);
    const pages = Math.ceil(liveCounts[head] / this.pageSize);
    const start = head * maxPages * headDim;
    return {
      pages,
      min: observed.min.subarray(start, start + pages * headDim),
      max: observed.max.subarray(start, start + pages * headDim),
    };
  }
}
