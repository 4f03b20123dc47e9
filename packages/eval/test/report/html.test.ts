import { describe, expect, it } from 'vitest';
import type { SweepResults } from '../../src/harness/results';
import { renderHtml } from '../../src/report/index';
import { BUDGETS, cell, fakeSweep, POLICIES } from './fixture';
import { type Element, findAll, hasClass, parseMarkup, textContent } from './markup';

const PLOT_LEFT = 72;
const PLOT_RIGHT = 530;
const PLOT_TOP = 20;
const PLOT_BOTTOM = 360;

function byId(root: Element, id: string): Element {
  const [found] = findAll(root, (element) => element.attributes.id === id);
  if (found === undefined) throw new Error(`no element #${id}`);
  return found;
}

function polylinePoints(series: Element): [number, number][] {
  const [line] = findAll(series, (element) => element.name === 'polyline');
  return line!.attributes
    .points!.split(' ')
    .map((pair) => pair.split(',').map(Number) as [number, number]);
}

describe('renderHtml', () => {
  const html = renderHtml(fakeSweep());
  const root = parseMarkup(html);

  it('is a well-formed, self-contained page without scripts or external assets', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(findAll(root, (element) => element.name === 'script')).toHaveLength(0);
    expect(
      findAll(root, (element) => 'src' in element.attributes || 'href' in element.attributes),
    ).toHaveLength(0);
    expect(html).not.toMatch(/url\(|@import|https?:\/\/(?!www\.w3\.org\/2000\/svg")/);
    const [csp] = findAll(
      root,
      (element) => element.attributes['http-equiv'] === 'Content-Security-Policy',
    );
    expect(csp!.attributes.content).toContain("default-src 'none'");
    expect(findAll(root, (element) => element.name === 'style')).toHaveLength(1);
  });

  it('has the results table with one body row per task × policy × budget', () => {
    const [table] = findAll(root, (element) => element.name === 'table');
    const bodyRows = findAll(table!, (element) => element.name === 'tr').slice(1);
    expect(bodyRows).toHaveLength(20);
    const codes = findAll(table!, (element) => element.name === 'code').map(textContent);
    expect(codes).toContain(
      'lethe eval --task lm --policy snapkv --budget 0.25 --seed 0 --examples 64 --out runs/sweep-a',
    );
  });

  it('has exactly the expected figures, each an <svg> with a <title> and a legend', () => {
    const figures = findAll(root, (element) => element.name === 'figure');
    expect(figures.map((figure) => figure.attributes.id)).toEqual([
      'plot-countdown-accuracy',
      'plot-lm-perplexity',
    ]);
    for (const figure of figures) {
      const [svg] = findAll(figure, (element) => element.name === 'svg');
      const [title] = svg!.children;
      expect(title!.name).toBe('title');
      expect(title!.text.length).toBeGreaterThan(0);
      expect(svg!.attributes['aria-labelledby']).toBe(
        `${figure.attributes.id}-title ${figure.attributes.id}-desc`,
      );
      const legend = findAll(svg!, (element) => hasClass(element, 'legend-item'));
      expect(legend.map((item) => item.attributes['data-series'])).toEqual(['full', ...POLICIES]);
      expect(legend.map(textContent)).toEqual(['full cache', ...POLICIES]);
      for (const axis of ['x-axis', 'y-axis']) {
        const [group] = findAll(svg!, (element) => hasClass(element, axis));
        expect(
          findAll(group!, (element) => hasClass(element, 'tick-label')).length,
        ).toBeGreaterThanOrEqual(3);
        expect(findAll(group!, (element) => hasClass(element, 'axis-label'))).toHaveLength(1);
      }
      expect(findAll(figure, (element) => element.name === 'figcaption')).toHaveLength(1);
    }
  });

  it('draws one line per policy through its budgets inside the plot area', () => {
    const figure = byId(root, 'plot-countdown-accuracy');
    const series = findAll(figure, (element) => hasClass(element, 'series'));
    expect(series.map((group) => group.attributes['data-series'])).toEqual(['full', ...POLICIES]);
    const [full, ...policies] = series;
    expect(hasClass(full!, 'reference')).toBe(true);
    expect(findAll(full!, (element) => hasClass(element, 'marker'))).toHaveLength(1);
    expect(findAll(full!, (element) => hasClass(element, 'reference-line'))).toHaveLength(1);
    for (const group of policies) {
      const points = polylinePoints(group);
      expect(points).toHaveLength(BUDGETS.length);
      expect(findAll(group, (element) => hasClass(element, 'marker'))).toHaveLength(BUDGETS.length);
      for (const [x, y] of points) {
        expect(x).toBeGreaterThanOrEqual(PLOT_LEFT);
        expect(x).toBeLessThanOrEqual(PLOT_RIGHT);
        expect(y).toBeGreaterThanOrEqual(PLOT_TOP);
        expect(y).toBeLessThanOrEqual(PLOT_BOTTOM);
      }
      // Sorted by peak entries; accuracy grows with the budget, so the line rises (y falls).
      expect(points.map(([x]) => x)).toEqual([...points.map(([x]) => x)].sort((a, b) => a - b));
      expect(points[0]![1]).toBeGreaterThan(points[2]![1]);
    }
    // The full cache is the most accurate: its dashed level lies above every policy point.
    const [level] = findAll(full!, (element) => hasClass(element, 'reference-line'));
    const fullY = Number(level!.attributes.y1);
    for (const group of policies)
      for (const [, y] of polylinePoints(group)) expect(y).toBeGreaterThan(fullY);
  });

  it('plots perplexity against net keep-rate, the full cache at 1', () => {
    const figure = byId(root, 'plot-lm-perplexity');
    const [full] = findAll(figure, (element) => hasClass(element, 'reference'));
    const [marker] = findAll(full!, (element) => hasClass(element, 'marker'));
    expect(textContent(marker!)).toContain('net keep-rate 1.000');
    const xs = findAll(
      figure,
      (element) => hasClass(element, 'series') && !hasClass(element, 'reference'),
    )
      .flatMap(polylinePoints)
      .map(([x]) => x);
    expect(Math.max(...xs)).toBeLessThan(Number(marker!.attributes.cx));
  });

  it('notes rows without a net keep-rate and renders an empty plot as a note', () => {
    const row = (policy: string, budget: number, netKeep?: number) =>
      cell('wiki', policy, budget, {
        perplexity: 9,
        peak: 100,
        live: 90,
        fullPeak: 200,
        tokensPerSecond: 5,
        ...(netKeep === undefined ? {} : { netKeep }),
      });
    const partial = parseMarkup(
      renderHtml({ ...fakeSweep(), cells: [row('h2o', 0.5, 0.5), row('h2o', 0.25)] }),
    );
    const figure = byId(partial, 'plot-wiki-perplexity');
    expect(textContent(figure)).toContain('1 row(s) without a net keep-rate are not shown.');
    expect(
      polylinePoints(findAll(figure, (element) => hasClass(element, 'series'))[0]!),
    ).toHaveLength(1);
    const empty = parseMarkup(renderHtml({ ...fakeSweep(), cells: [row('h2o', 0.25)] }));
    const emptyFigure = byId(empty, 'plot-wiki-perplexity');
    expect(findAll(emptyFigure, (element) => element.name === 'svg')).toHaveLength(0);
    expect(findAll(emptyFigure, (element) => hasClass(element, 'empty'))).toHaveLength(1);
  });

  it('gives tasks whose names collide after slugging distinct figure ids', () => {
    const sweep: SweepResults = {
      ...fakeSweep(),
      cells: ['a b', 'a-b', 'a/b'].map((task) =>
        cell(task, 'h2o', 0.5, {
          accuracy: 0.4,
          peak: 10,
          live: 8,
          fullPeak: 20,
          tokensPerSecond: 3,
        }),
      ),
    };
    const figures = findAll(parseMarkup(renderHtml(sweep)), (element) => element.name === 'figure');
    expect(figures.map((figure) => figure.attributes.id)).toEqual([
      'plot-a-b-accuracy',
      'plot-a-b-2-accuracy',
      'plot-a-b-3-accuracy',
    ]);
  });

  it('escapes every text, so hostile names cannot inject markup', () => {
    const hostile = '"><script>alert(1)</script><svg onload=alert(2)>';
    const base = fakeSweep();
    const sweep: SweepResults = {
      ...base,
      config: { note: '</pre><script>alert(3)</script>' },
      cells: base.cells.map((result) => ({
        ...result,
        key: {
          ...result.key,
          task: `${result.key.task}${hostile}`,
          policy: result.key.policy === 'full' ? 'full' : `${result.key.policy}${hostile}`,
        },
        command: `${result.command} '</code><img src=x onerror=alert(4)>'`,
      })),
    };
    const output = renderHtml(sweep);
    const parsed = parseMarkup(output);
    expect(findAll(parsed, (element) => ['script', 'img'].includes(element.name))).toHaveLength(0);
    expect(
      findAll(parsed, (element) =>
        Object.keys(element.attributes).some((name) => name.startsWith('on')),
      ),
    ).toHaveLength(0);
    expect(findAll(parsed, (element) => element.name === 'svg')).toHaveLength(2);
    const figures = findAll(parsed, (element) => element.name === 'figure');
    expect(figures.map((figure) => figure.attributes.id)).toEqual([
      'plot-countdown-script-alert-1-script-svg-onload-alert-2-accuracy',
      'plot-lm-script-alert-1-script-svg-onload-alert-2-perplexity',
    ]);
    const legend = findAll(figures[0]!, (element) => hasClass(element, 'legend-item')).map(
      textContent,
    );
    expect(legend[1]).toBe(`streaming-llm${hostile}`);
  });
});
