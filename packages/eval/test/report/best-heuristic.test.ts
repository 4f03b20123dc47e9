import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import type { CellResult, SweepResults } from '../../src/harness/results';
import { holmAdjust } from '../../src/metrics/holm';
import { pairedAccuracy } from '../../src/metrics/paired-accuracy';
import { pairedBootstrap } from '../../src/metrics/paired-bootstrap';
import { compareToBestHeuristic } from '../../src/report/best-heuristic';
import { renderHtml, renderMarkdown } from '../../src/report/index';
import { fakeSweep } from './fixture';

const EXAMPLES = 50;
const AGGREGATE = { mean: 1, stderr: 0, n: 1 };

/** A generation cell whose example `i` is solved when `solved(i)`. */
function generation(
  policy: string,
  budget: number,
  seed: number,
  solved: (i: number) => boolean,
  samples = 1,
): CellResult {
  return {
    key: { task: 'retrieval', policy, budget, seed },
    metrics: { meanLive: AGGREGATE, peakLive: AGGREGATE, tokensPerSecond: AGGREGATE },
    sequences: Array.from({ length: EXAMPLES * samples }, (_, s) => ({
      example: Math.floor(s / samples),
      correct: solved(Math.floor(s / samples) + (s % samples) * 1000 + seed * 7),
      peakTotal: 10,
      generated: 4,
    })),
    command: 'lethe eval …',
    elapsedMs: 1,
  };
}

/** A perplexity cell whose document `i` has perplexity `ppl(i)` over 9 predicted tokens. */
function documents(policy: string, seed: number, ppl: (i: number) => number): CellResult {
  return {
    key: { task: 'lm', policy, budget: 0.5, seed },
    metrics: { meanLive: AGGREGATE, peakLive: AGGREGATE, tokensPerSecond: AGGREGATE },
    documents: Array.from({ length: EXAMPLES }, (_, example) => ({
      example,
      sumNll: 9 * Math.log(ppl(example)),
      predicted: 9,
    })),
    command: 'lethe eval …',
    elapsedMs: 1,
  };
}

function results(cells: CellResult[], samplesPerExample = 1): SweepResults {
  return {
    format: 'lethe-eval-results',
    version: 2,
    config: { samplesPerExample },
    cells,
  } as SweepResults;
}

const solvedBelow = (k: number) => (i: number) => i % 10 < k;

describe('compareToBestHeuristic', () => {
  const seeds = [0, 1];
  const cells = seeds.flatMap((seed) => [
    generation('full', 1, seed, () => true),
    generation('h2o', 0.5, seed, solvedBelow(3)),
    generation('snapkv', 0.5, seed, solvedBelow(5)),
    generation('namm', 0.5, seed, solvedBelow(8)),
    generation('gsa', 0.5, seed, (i) => i % 10 >= 1 && i % 10 <= 5),
    generation('namm', 0.25, seed, solvedBelow(2)),
  ]);

  it('pairs each policy with the best heuristic on the same examples, McNemar then Holm', () => {
    const out = compareToBestHeuristic(results(cells), { heuristics: ['h2o', 'snapkv'] });
    // no heuristic ran at 0.25, and the full cache is never compared
    expect(out.map((c) => [c.budget, c.policy])).toEqual([
      [0.5, 'h2o'],
      [0.5, 'namm'],
      [0.5, 'gsa'],
    ]);
    expect(new Set(out.map((c) => c.baseline))).toEqual(new Set(['snapkv']));
    const pooled = (cellsOf: string) =>
      cells
        .filter((c) => c.key.policy === cellsOf && c.key.budget === 0.5)
        .flatMap((c) => c.sequences!.map((s) => s.correct));
    const raw = ['h2o', 'namm', 'gsa'].map(
      (p) => pairedAccuracy(pooled(p), pooled('snapkv')).pValue,
    );
    expect(out.map((c) => c.pValue)).toEqual(raw);
    expect(out.map((c) => c.adjustedP)).toEqual(holmAdjust(raw));
    expect(out.map((c) => c.verdict)).toEqual(['worse', 'better', 'indistinguishable']);
    expect(out[1]).toMatchObject({
      metric: 'accuracy',
      test: 'mcnemar',
      n: 2 * EXAMPLES,
      score: 0.8,
      baselineScore: 0.5,
    });
  });

  it('pairs only the seeds both ran, and breaks ties between heuristics by the order given', () => {
    const partial = cells.filter((c) => !(c.key.policy === 'namm' && c.key.seed === 1));
    const out = compareToBestHeuristic(results(partial), { heuristics: ['h2o', 'snapkv'] });
    expect(out.find((c) => c.policy === 'namm')!.n).toBe(EXAMPLES);
    const twins = seeds.flatMap((seed) => [
      generation('tova', 0.5, seed, solvedBelow(5)),
      generation('snapkv', 0.5, seed, solvedBelow(5)),
    ]);
    expect(compareToBestHeuristic(results(twins), { heuristics: ['tova', 'snapkv'] })).toEqual([
      expect.objectContaining({ policy: 'snapkv', baseline: 'tova', verdict: 'indistinguishable' }),
    ]);
  });

  it('bootstraps per-document perplexity (lower is better) and per-example accuracy over samples', () => {
    const lm = [0, 1].flatMap((seed) => [
      documents('knorm', seed, (i) => 3 + (i % 7) / 10),
      documents('sol', seed, (i) => 2.5 + (i % 7) / 10),
    ]);
    const bootstrap = { resamples: 2000, seed: 1 };
    const [sol] = compareToBestHeuristic(results(lm), { heuristics: ['knorm'], bootstrap });
    const perDocument = (p: string) =>
      lm
        .filter((c) => c.key.policy === p)
        .flatMap((c) => c.documents!.map((d) => Math.exp(d.sumNll / d.predicted)));
    expect(sol).toMatchObject({ policy: 'sol', baseline: 'knorm', metric: 'perplexity' });
    expect(sol!.pValue).toBe(
      pairedBootstrap(perDocument('sol'), perDocument('knorm'), bootstrap).pValue,
    );
    expect(sol!.verdict).toBe('better');
    expect(sol!.score).toBeCloseTo(sol!.baselineScore - 0.5, 10);

    const sampled = [0, 1].flatMap((seed) => [
      generation('h2o', 0.5, seed, solvedBelow(5), 4),
      generation('ngc', 0.5, seed, solvedBelow(5), 4),
    ]);
    const [ngc] = compareToBestHeuristic(results(sampled, 4), { heuristics: ['h2o'], bootstrap });
    expect(ngc).toMatchObject({ test: 'bootstrap', n: 2 * EXAMPLES, verdict: 'indistinguishable' });
  });

  it('refuses bad options, naming them', () => {
    expectLetheError(
      () => compareToBestHeuristic(results(cells), { heuristics: 'h2o' as never }),
      'E_ARG',
      'options.heuristics',
    );
    expectLetheError(
      () => compareToBestHeuristic(results(cells), { heuristics: [], alpha: 0 }),
      'E_ARG',
      'options.alpha',
    );
  });
});

describe('the report’s comparisons with the best heuristic', () => {
  const sweep = fakeSweep();
  const comparisons = compareToBestHeuristic(sweep, { heuristics: ['streaming-llm', 'h2o'] });

  it('follow the task’s score tables in Markdown: one row per comparison, largest budget first', () => {
    // the fake sweep's countdown cells carry their sequences, its lm cells no documents
    expect(comparisons.length).toBeGreaterThan(0);
    expect(new Set(comparisons.map((c) => c.task))).toEqual(new Set(['countdown']));
    const markdown = renderMarkdown(sweep, { comparisons });
    const at = markdown.indexOf('### Against the best heuristic');
    expect(at).toBeGreaterThan(markdown.indexOf('## countdown'));
    expect(at).toBeLessThan(markdown.indexOf('## lm'));
    const section = markdown.slice(at, markdown.indexOf('## lm'));
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && /%/.test(line));
    expect(rows).toHaveLength(comparisons.length);
    const sorted = [...comparisons].sort((a, b) => b.budget - a.budget);
    rows.forEach((row, i) => {
      const c = sorted[i]!;
      expect(row).toContain(`| ${c.policy} |`);
      expect(row).toContain(`| ${c.baseline} |`);
      expect(row).toContain(`| ${(100 * c.score).toFixed(1)}% |`);
      expect(
        row.endsWith(
          `${{ better: '▲ better', worse: '▼ worse', indistinguishable: '· not told apart' }[c.verdict]} |`,
        ),
      ).toBe(true);
    });
    expect(section).toContain('Holm-adjusted together, and a verdict needs an adjusted p ≤ 0.05');
    expect(renderMarkdown(sweep)).not.toContain('Against the best heuristic');
  });

  it('mark each verdict in the policy × budget tables and beside the points of the plots', () => {
    const verdicts = ['better', 'worse'] as const;
    const marked = comparisons.map((c, i) => ({
      ...c,
      verdict: verdicts[i] ?? ('indistinguishable' as const),
    }));
    const markdown = renderMarkdown(sweep, { comparisons: marked });
    const table = markdown.slice(markdown.indexOf('## countdown'), markdown.indexOf('### Against'));
    const lines = table.split('\n');
    const header = lines.find((line) => line.startsWith('| policy |'))!.split(' | ');
    const cellOf = (policy: string, budget: number) => {
      const column = header.findIndex((h) => h.startsWith(`${Number((budget * 100).toFixed(2))}%`));
      const row = lines.find((line) => line.startsWith(`| ${policy} |`))!;
      return row.replace(/ \|$/, '').split(' | ')[column]!;
    };
    expect(cellOf(marked[0]!.policy, marked[0]!.budget)).toMatch(/\) ▲$/);
    expect(cellOf(marked[1]!.policy, marked[1]!.budget)).toMatch(/\) ▼$/);
    // every other cell unmarked; the caption says what the marks mean
    expect(table.match(/\) [▲▼]/g)).toHaveLength(2);
    expect(table).toContain('▲ / ▼: better / worse than the best heuristic');
    const told = comparisons.filter((c) => c.verdict !== 'indistinguishable').length;
    expect(renderMarkdown(sweep, { comparisons }).match(/\) [▲▼]/g) ?? []).toHaveLength(told);

    const html = renderHtml(sweep, { comparisons: marked });
    const figure = html.slice(html.indexOf('id="plot-countdown-accuracy-budget"'));
    const plot = figure.slice(0, figure.indexOf('</figure>'));
    // beside the marker of that policy's point, in its series; the budget labels stay plain
    const series = (policy: string) => {
      const from = plot.indexOf(`data-series="${policy}"`);
      return plot.slice(from, plot.indexOf('</g>', from));
    };
    const marksOf = (policy: string) =>
      [...series(policy).matchAll(/class="verdict-mark"[^>]*>([▲▼])</g)].map((m) => m[1]);
    expect(marksOf(marked[0]!.policy)).toContain('▲');
    expect(marksOf(marked[1]!.policy)).toContain('▼');
    expect(plot.match(/class="verdict-mark"/g)).toHaveLength(2);
    expect(plot).not.toMatch(/% [▲▼]</);
    expect(plot).toContain('▲ / ▼: better / worse than the best heuristic');
    expect(html).toContain('<span class="mark">▲</span>');
  });

  it('in HTML: a table per task, every label escaped', () => {
    const html = renderHtml(sweep, { comparisons });
    expect(html.match(/<table class="baseline">/g)).toHaveLength(1);
    const body = html.slice(html.indexOf('<table class="baseline">'));
    const rows = body.slice(0, body.indexOf('</table>')).match(/<tr><td/g);
    expect(rows).toHaveLength(comparisons.length);
    const hostile = comparisons.map((c) => ({ ...c, policy: '<b>x</b>' }));
    expect(renderHtml(sweep, { comparisons: hostile })).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(renderHtml(sweep)).not.toContain('class="baseline"');
  });
});
