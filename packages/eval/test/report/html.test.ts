import { describe, expect, it } from 'vitest';
import type { SweepResults } from '../../src/harness/results';
import { renderHtml } from '../../src/report/index';
import { wilsonInterval } from '../../src/report/interval';
import { BUDGETS, cell, fakeSweep, POLICIES, WIDE_POLICIES, wideSweep } from './fixture';
import { type Element, findAll, hasClass, parseMarkup, textContent } from './markup';

const PLOT_LEFT = 68;
const PLOT_RIGHT = 520;
const PLOT_TOP = 28;
const PLOT_BOTTOM = 320;

function byId(root: Element, id: string): Element {
  const [found] = findAll(root, (element) => element.attributes.id === id);
  if (found === undefined) throw new Error(`no element #${id}`);
  return found;
}

function byClass(root: Element, name: string): Element[] {
  return findAll(root, (element) => hasClass(element, name));
}

function polylinePoints(series: Element): [number, number][] {
  const [line] = findAll(series, (element) => element.name === 'polyline');
  return line!.attributes
    .points!.split(' ')
    .map((pair) => pair.split(',').map(Number) as [number, number]);
}

/** Centre of a marker: a `<circle>` or the centroid of a `<polygon>`'s vertices. */
function markerCentre(marker: Element): [number, number] {
  if (marker.name === 'circle') return [Number(marker.attributes.cx), Number(marker.attributes.cy)];
  const vertices = marker.attributes.points!.split(' ').map((pair) => pair.split(',').map(Number));
  const mean = (k: number) => vertices.reduce((sum, v) => sum + v[k]!, 0) / vertices.length;
  return [mean(0), mean(1)];
}

describe('renderHtml', () => {
  const html = renderHtml(fakeSweep());
  const root = parseMarkup(html);

  it('is a well-formed, self-contained page without scripts or external assets', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(findAll(root, (element) => element.name === 'script')).toHaveLength(0);
    expect(findAll(root, (element) => 'src' in element.attributes)).toHaveLength(0);
    // Links only jump within the page.
    for (const link of findAll(root, (element) => 'href' in element.attributes)) {
      expect(link.attributes.href).toMatch(/^#[\w-]+$/);
      byId(root, link.attributes.href!.slice(1));
    }
    expect(html).not.toMatch(/url\(|@import|https?:\/\/(?!www\.w3\.org\/2000\/svg")/);
    const [csp] = findAll(
      root,
      (element) => element.attributes['http-equiv'] === 'Content-Security-Policy',
    );
    expect(csp!.attributes.content).toContain("default-src 'none'");
    expect(findAll(root, (element) => element.name === 'style')).toHaveLength(1);
  });

  it('puts the plots first, per task, then the policy × budget tables, the prose and the full table last', () => {
    const [main] = findAll(root, (element) => element.name === 'main');
    // before the first section: the heading, one line of what was swept, the links
    const before = main!.children.slice(
      0,
      main!.children.findIndex((element) => element.name === 'section'),
    );
    expect(before.map((element) => element.name)).toEqual(['h1', 'p', 'nav']);
    const sections = main!.children.filter((element) => element.name === 'section');
    expect(sections.map((section) => section.attributes.id)).toEqual([
      'task-countdown',
      'task-lm',
      'how-to-read',
      'all-rows',
      'config',
    ]);
    expect(textContent(sections[2]!)).toContain('A budget b gives each example a ceiling');
    for (const section of sections.slice(0, 2)) {
      const kinds = section.children.map((child) =>
        child.name === 'ul' ? 'legend' : child.name === 'div' ? child.attributes.class : child.name,
      );
      expect(kinds.indexOf('plots')).toBeLessThan(kinds.indexOf('table'));
      expect(kinds[1]).toBe('legend');
    }
  });

  it('has two figures per task, each an <svg> with a title, description and labelled axes', () => {
    const figures = findAll(root, (element) => element.name === 'figure');
    expect(figures.map((figure) => figure.attributes.id)).toEqual([
      'plot-countdown-accuracy-budget',
      'plot-countdown-accuracy-peak',
      'plot-lm-perplexity-budget',
      'plot-lm-perplexity-peak',
    ]);
    for (const figure of figures) {
      const [svg] = findAll(figure, (element) => element.name === 'svg');
      const [title, desc] = svg!.children;
      expect(title!.name).toBe('title');
      expect(desc!.name).toBe('desc');
      expect(svg!.attributes['aria-labelledby']).toBe(
        `${figure.attributes.id}-title ${figure.attributes.id}-desc`,
      );
      for (const axis of ['x-axis', 'y-axis']) {
        const [group] = byClass(svg!, axis);
        expect(byClass(group!, 'tick-label').length).toBeGreaterThanOrEqual(3);
        expect(byClass(group!, 'axis-label')).toHaveLength(1);
      }
      expect(byClass(svg!, 'series').map((group) => group.attributes['data-series'])).toEqual([
        'full',
        ...POLICIES,
      ]);
      expect(findAll(figure, (element) => element.name === 'figcaption')).toHaveLength(1);
    }
    expect(textContent(byId(root, 'plot-countdown-accuracy-budget'))).toContain(
      'Accuracy vs realised budget: countdown',
    );
    expect(textContent(byId(root, 'plot-lm-perplexity-peak'))).toContain(
      'Perplexity vs peak KV entries: lm',
    );
  });

  it('shares one legend per task: a distinct colour and marker per policy', () => {
    const section = byId(root, 'task-countdown');
    const [legend] = findAll(section, (element) => element.name === 'ul');
    const items = byClass(legend!, 'legend-item');
    expect(items.map((item) => item.attributes['data-series'])).toEqual(['full', ...POLICIES]);
    expect(items.map(textContent)).toEqual(['full cache (band: 95% CI)', ...POLICIES]);
    const colours = items.map(
      (item) => findAll(item, (element) => element.name === 'line')[0]!.attributes.stroke,
    );
    const shapes = items.map((item) => {
      const [marker] = findAll(item, (element) => ['circle', 'polygon'].includes(element.name));
      if (marker!.name === 'circle') return 'circle';
      const [cx, cy] = markerCentre(marker!);
      return marker!.attributes
        .points!.split(' ')
        .map((pair) => pair.split(',').map(Number))
        .map(([x, y]) => `${(x! - cx).toFixed(1)},${(y! - cy).toFixed(1)}`)
        .join(' ');
    });
    expect(new Set(colours).size).toBe(items.length);
    expect(new Set(shapes).size).toBe(items.length);
  });

  it('draws one line per policy through its budgets inside the plot, labelled by budget', () => {
    const figure = byId(root, 'plot-countdown-accuracy-budget');
    const [full, ...policies] = byClass(figure, 'series');
    expect(hasClass(full!, 'reference')).toBe(true);
    expect(byClass(full!, 'marker')).toHaveLength(1);
    expect(byClass(full!, 'reference-line')).toHaveLength(1);
    expect(byClass(full!, 'reference-band')).toHaveLength(1);
    for (const group of policies) {
      const points = polylinePoints(group);
      expect(points).toHaveLength(BUDGETS.length);
      expect(byClass(group, 'marker')).toHaveLength(BUDGETS.length);
      for (const [x, y] of points) {
        expect(x).toBeGreaterThanOrEqual(PLOT_LEFT);
        expect(x).toBeLessThanOrEqual(PLOT_RIGHT);
        expect(y).toBeGreaterThanOrEqual(PLOT_TOP);
        expect(y).toBeLessThanOrEqual(PLOT_BOTTOM);
      }
      // Sorted by realised budget; accuracy grows with the budget, so the line rises (y falls).
      expect(points.map(([x]) => x)).toEqual([...points.map(([x]) => x)].sort((a, b) => a - b));
      expect(points[0]![1]).toBeGreaterThan(points[2]![1]);
    }
    // The full cache is the most accurate: its dashed level lies above every policy point.
    const [level] = byClass(full!, 'reference-line');
    for (const group of policies)
      for (const [, y] of polylinePoints(group))
        expect(y).toBeGreaterThan(Number(level!.attributes.y1));
    const labels = byClass(figure, 'point-label').map(textContent);
    expect(labels.sort()).toEqual(['100%', '25%', '50%', '75%']);
  });

  it('draws 95% intervals: Wilson for accuracy, in the tooltips and as error bars', () => {
    const figure = byId(root, 'plot-countdown-accuracy-budget');
    const [snapkv] = findAll(figure, (element) => element.attributes['data-series'] === 'snapkv');
    const tooltips = byClass(snapkv!, 'marker').map(textContent);
    const { low, high } = wilsonInterval(Math.round(0.421 * 256), 256);
    expect(tooltips).toContain(
      `snapkv, budget 50%: accuracy ${((Math.round(0.421 * 256) / 256) * 100).toFixed(1)}%, ` +
        `95% CI ${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)}, ` +
        `realised ${((2290 / 4480) * 100).toFixed(1)}%, n = 256`,
    );
    for (const bar of byClass(snapkv!, 'error-bar')) {
      expect(Number(bar.attributes.y1)).toBeGreaterThan(Number(bar.attributes.y2));
    }
    expect(byClass(snapkv!, 'error-bar')).toHaveLength(BUDGETS.length);
  });

  it('has a policy × budget table per task with the full cache apart and the best in bold', () => {
    const table = byId(root, 'table-countdown-accuracy');
    const header = findAll(
      table,
      (element) => element.name === 'th' && element.attributes.scope === 'col',
    );
    expect(header.map((th) => th.text)).toEqual(['policy', '25%', '50%', '75%']);
    expect(textContent(header[1]!)).toMatch(/^25%realised \d+\.\d–\d+\.\d%$/);
    const rows = findAll(table, (element) => element.name === 'tr').slice(1);
    expect(rows.map((row) => textContent(row.children[0]!))).toEqual(['full cache', ...POLICIES]);
    expect(textContent(rows[0]!)).toContain('51.2% at 100%');
    expect(byClass(rows[0]!, 'ci').map(textContent)).toEqual(['45.1–57.2']);
    const best = findAll(table, (element) => element.name === 'strong').map(textContent);
    expect(best).toEqual(['24.6%', '42.2%', '48.8%']);
    expect(textContent(byId(root, 'table-countdown-accuracy-about'))).toContain(
      'Full cache (100%): 51.2%',
    );
  });

  it('ends with every row in a scrolling box: examples and seed ids, reproduce commands', () => {
    const [box] = byClass(byId(root, 'all-rows'), 'table-scroll');
    const [table] = findAll(box!, (element) => element.name === 'table');
    const header = findAll(table!, (element) => element.name === 'th').map(textContent);
    expect(header.slice(0, 7)).toEqual([
      'task',
      'policy',
      'budget',
      'realised budget',
      'examples (seeds)',
      'accuracy (95% CI)',
      'perplexity (95% CI)',
    ]);
    const bodyRows = findAll(table!, (element) => element.name === 'tr').slice(1);
    expect(bodyRows).toHaveLength(20);
    expect(textContent(bodyRows[0]!.children[4]!)).toBe('256 (seed 0)');
    const codes = findAll(table!, (element) => element.name === 'code').map(textContent);
    expect(codes).toContain(
      'lethe eval --task lm --policy snapkv --budget 0.25 --seed 0 --examples 64 --out runs/sweep-a',
    );
  });

  it('uses log axes where the values span a factor of 5 or more', () => {
    const wide = parseMarkup(renderHtml(wideSweep()));
    const axis = (id: string, name: string) => byClass(byId(wide, id), name)[0]!;
    for (const id of ['plot-retrieval-accuracy-budget', 'plot-lm-perplexity-peak']) {
      expect(hasClass(axis(id, 'x-axis'), 'log')).toBe(true);
    }
    expect(
      byClass(axis('plot-retrieval-accuracy-budget', 'x-axis'), 'tick-label').map(textContent),
    ).toEqual(['10%', '20%', '50%', '100%']);
    expect(hasClass(axis('plot-lm-perplexity-budget', 'y-axis'), 'log')).toBe(true);
    // Accuracy stays linear, within 0–100%.
    const accuracy = axis('plot-retrieval-accuracy-budget', 'y-axis');
    expect(hasClass(accuracy, 'log')).toBe(false);
    expect(byClass(accuracy, 'tick-label').map(textContent).at(-1)).toBe('100%');
    // The fake sweep's 25–100% budgets span less than a factor of 5: linear.
    const narrow = byClass(byId(root, 'plot-countdown-accuracy-budget'), 'x-axis')[0]!;
    expect(hasClass(narrow, 'log')).toBe(false);
  });

  it('draws identical policies once, named together, and spreads coinciding markers', () => {
    const wide = parseMarkup(renderHtml(wideSweep()));
    for (const task of ['retrieval', 'lm']) {
      const section = byId(wide, `task-${task}`);
      const legend = byClass(section, 'legend-item').map(textContent);
      expect(legend).toEqual([
        'full cache (band: 95% CI)',
        'snapkv',
        'h2o',
        'tova',
        'knorm = l2norm',
      ]);
      for (const figure of findAll(section, (element) => element.name === 'figure')) {
        const series = byClass(figure, 'series').map((group) => group.attributes['data-series']);
        expect(series).toEqual(['full', ...WIDE_POLICIES.filter((p) => p !== 'l2norm')]);
      }
      expect(textContent(section)).toContain('knorm (= l2norm)');
      expect(textContent(section)).toContain('Identical results at every budget');
    }
    // On retrieval, h2o, tova and knorm all score 0% at 10% and 25%: no marker hides another.
    const figure = byId(wide, 'plot-retrieval-accuracy-budget');
    const centres = byClass(figure, 'marker').map(markerCentre);
    for (const [i, [x, y]] of centres.entries()) {
      for (const [ox, oy] of centres.slice(i + 1)) {
        expect(Math.abs(x - ox) > 5 || Math.abs(y - oy) > 5).toBe(true);
      }
    }
  });

  it('notes rows a plot cannot place and renders an empty plot as a note', () => {
    const row = (policy: string, budget: number) => {
      const result = cell('wiki', policy, budget, {
        perplexity: 9,
        peak: 100,
        live: 90,
        fullPeak: 200,
        tokensPerSecond: 5,
      });
      return budget === 0.5
        ? result
        : { ...result, metrics: { ...result.metrics, realisedBudget: undefined } };
    };
    const partial = parseMarkup(
      renderHtml({ ...fakeSweep(), cells: [row('h2o', 0.5), row('h2o', 0.25)] }),
    );
    const figure = byId(partial, 'plot-wiki-perplexity-budget');
    expect(textContent(figure)).toContain('1 row(s) without this x are not shown.');
    expect(polylinePoints(byClass(figure, 'series')[0]!)).toHaveLength(1);
    expect(
      polylinePoints(byClass(byId(partial, 'plot-wiki-perplexity-peak'), 'series')[0]!),
    ).toHaveLength(2);
    const empty = parseMarkup(renderHtml({ ...fakeSweep(), cells: [row('h2o', 0.25)] }));
    const emptyFigure = byId(empty, 'plot-wiki-perplexity-budget');
    expect(findAll(emptyFigure, (element) => element.name === 'svg')).toHaveLength(0);
    expect(byClass(emptyFigure, 'empty')).toHaveLength(1);
  });

  it('plots the peak KV memory in KiB where every row records its bytes', () => {
    const row = (policy: string, budget: number, peak: number) => {
      const result = cell('wiki', policy, budget, {
        perplexity: 9,
        peak,
        live: peak - 10,
        fullPeak: 200,
        tokensPerSecond: 5,
      });
      // 2 · head_dim 16 · 4 bytes per entry
      const peakKvBytes = { mean: peak * 128, stderr: 0, n: 4 };
      return { ...result, metrics: { ...result.metrics, peakKvBytes } };
    };
    const cells = [row('full', 1, 200), row('h2o', 0.5, 100), row('h2o', 0.25, 50)];
    const figure = byId(
      parseMarkup(renderHtml({ ...fakeSweep(), cells })),
      'plot-wiki-perplexity-peak',
    );
    expect(textContent(figure)).toContain('Perplexity vs peak KV memory: wiki');
    expect(textContent(figure)).toContain('peak KV 12.5 KiB');
    expect(textContent(figure)).toContain('peak KV 6.3 KiB');
    // one row without bytes: the plot falls back to entries for the whole task
    const old = cells.map((c, i) =>
      i === 2 ? { ...c, metrics: { ...c.metrics, peakKvBytes: undefined } } : c,
    );
    const fallback = byId(
      parseMarkup(renderHtml({ ...fakeSweep(), cells: old })),
      'plot-wiki-perplexity-peak',
    );
    expect(textContent(fallback)).toContain('Perplexity vs peak KV entries: wiki');
  });

  it('gives tasks whose names collide after slugging distinct ids', () => {
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
    const page = parseMarkup(renderHtml(sweep));
    const figures = findAll(page, (element) => element.name === 'figure');
    expect(figures.map((figure) => figure.attributes.id)).toEqual([
      'plot-a-b-accuracy-budget',
      'plot-a-b-accuracy-peak',
      'plot-a-b-2-accuracy-budget',
      'plot-a-b-2-accuracy-peak',
      'plot-a-b-3-accuracy-budget',
      'plot-a-b-3-accuracy-peak',
    ]);
    const sections = findAll(page, (element) => hasClass(element, 'task'));
    expect(sections.map((section) => section.attributes.id)).toEqual([
      'task-a-b',
      'task-a-b-2',
      'task-a-b-3',
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
    const figures = findAll(parsed, (element) => element.name === 'figure');
    expect(figures.map((figure) => figure.attributes.id)).toEqual([
      'plot-countdown-script-alert-1-script-svg-onload-alert-2-accuracy-budget',
      'plot-countdown-script-alert-1-script-svg-onload-alert-2-accuracy-peak',
      'plot-lm-script-alert-1-script-svg-onload-alert-2-perplexity-budget',
      'plot-lm-script-alert-1-script-svg-onload-alert-2-perplexity-peak',
    ]);
    const legend = byClass(parsed, 'legend-item').map(textContent);
    expect(legend[1]).toBe(`streaming-llm${hostile}`);
  });
});
