import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium, skipWithoutChromium } from '@lethe/test-utils/chromium';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderChartFigure } from '../../src/report/chart';
import { renderHtml } from '../../src/report/index';
import { writeReport } from '../../src/report/node';
import { BUDGETS, fakeSweep, POLICIES, wideSweep } from './fixture';

// In CI (CI=true) Debian's chromium is installed, so the test runs and fails when it is missing.
// Elsewhere it is skipped when /usr/bin/chromium is absent, saying why.
const skip = skipWithoutChromium('[@lethe/eval] report rendering test');

/** The page width the report is laid out for (and its README screenshot is taken at). */
const WIDTH = 1280;

/** What the page reports about one figure, measured by the browser's layout engine. */
interface RenderedFigure {
  readonly box: { left: number; right: number; top: number; bottom: number };
  readonly svgWidth: number;
  readonly svgHeight: number;
  readonly title: string;
  readonly series: {
    key: string;
    reference: boolean;
    linePoints: number;
    markers: number;
    lineLength: number;
  }[];
}

function renderedFigure(page: Page, id: string): Promise<RenderedFigure> {
  return page.locator(`figure#${id}`).evaluate((element) => {
    const svg = element.querySelector('svg')!;
    const box = element.getBoundingClientRect();
    const svgBox = svg.getBoundingClientRect();
    return {
      box: { left: box.left, right: box.right, top: box.top, bottom: box.bottom },
      svgWidth: svgBox.width,
      svgHeight: svgBox.height,
      title: svg.querySelector(':scope > title')?.textContent ?? '',
      series: Array.from(svg.querySelectorAll('g.series'), (group) => {
        const line = group.querySelector('polyline');
        return {
          key: group.getAttribute('data-series') ?? '',
          reference: group.classList.contains('reference'),
          linePoints: line?.points.numberOfItems ?? 0,
          markers: group.querySelectorAll('.marker').length,
          lineLength: (line ?? group.querySelector('line.reference-line'))?.getBBox().width ?? 0,
        };
      }),
    };
  });
}

describe.skipIf(skip)('HTML report in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let dir: string;
  const requests: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lethe-eval-chromium-'));
    const files = await writeReport(dir, fakeSweep());
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(pathToFileURL(files.html).href, { waitUntil: 'load' });
  });

  afterAll(async () => {
    await browser?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('loads without errors and without fetching anything but the page', () => {
    expect(problems).toEqual([]);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatch(/^file:\/\/.*report\.html$/);
  });

  it(`does not overflow the page sideways at ${WIDTH} px`, async () => {
    const { scrollWidth, clientWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
  });

  it.each([
    ['countdown', 'accuracy', 'Accuracy'],
    ['lm', 'perplexity', 'Perplexity'],
  ])(
    'renders both plots of %s side by side, every series and point',
    async (task, score, label) => {
      const budget = await renderedFigure(page, `plot-${task}-${score}-budget`);
      const peak = await renderedFigure(page, `plot-${task}-${score}-peak`);
      expect(budget.title).toBe(`${label} vs realised budget: ${task}`);
      expect(peak.title).toBe(`${label} vs peak KV entries: ${task}`);
      expect(peak.box.top).toBeCloseTo(budget.box.top, 0);
      expect(peak.box.left).toBeGreaterThanOrEqual(budget.box.right);
      expect(peak.box.right).toBeLessThanOrEqual(WIDTH);
      for (const figure of [budget, peak]) {
        expect(figure.svgWidth).toBeGreaterThan(400);
        expect(figure.svgHeight).toBeGreaterThan(250);
        expect(figure.series.map((series) => series.key)).toEqual(['full', ...POLICIES]);
        for (const series of figure.series) {
          expect(series.lineLength).toBeGreaterThan(0);
          if (series.reference) {
            expect(series.markers).toBe(1);
          } else {
            expect(series.linePoints).toBe(BUDGETS.length);
            expect(series.markers).toBe(BUDGETS.length);
          }
        }
      }
      const legend = await page
        .locator(`#task-${task} .legend-item`)
        .evaluateAll((items) => items.map((item) => item.getBoundingClientRect().right));
      expect(legend).toHaveLength(1 + POLICIES.length);
      for (const right of legend) expect(right).toBeLessThanOrEqual(WIDTH);
    },
  );

  it('shows the policy × budget tables after the plots, the full table last in a scrolling box', async () => {
    const layout = await page.evaluate(() => {
      const top = (selector: string) =>
        document.querySelector(selector)!.getBoundingClientRect().top;
      const box = document.querySelector('#all-rows .table-scroll') as HTMLElement;
      const table = box.querySelector('table')!;
      const main = document.querySelector('main')!.getBoundingClientRect();
      return {
        plots: top('#task-countdown .plots'),
        compact: top('#table-countdown-accuracy'),
        lm: top('#task-lm'),
        all: top('#all-rows'),
        overflow: getComputedStyle(box).overflow,
        boxRight: box.getBoundingClientRect().right,
        boxHeight: box.getBoundingClientRect().height,
        mainRight: main.right,
        scrollsSideways: box.scrollWidth > box.clientWidth,
        tableRows: table.querySelectorAll('tbody tr').length,
      };
    });
    expect(layout.plots).toBeLessThan(layout.compact);
    expect(layout.compact).toBeLessThan(layout.lm);
    expect(layout.lm).toBeLessThan(layout.all);
    expect(layout.overflow).toBe('auto');
    expect(layout.boxRight).toBeLessThanOrEqual(layout.mainRight);
    expect(layout.scrollsSideways).toBe(true);
    expect(layout.boxHeight).toBeLessThanOrEqual(30 * 14 + 2);
    expect(layout.tableRows).toBe(20);
  });

  it('keeps coinciding markers apart on the page and merges identical policies', async () => {
    await page.setContent(renderHtml(wideSweep()));
    const markers = await page
      .locator('figure#plot-retrieval-accuracy-budget .marker')
      .evaluateAll((elements) =>
        elements.map((element) => {
          const box = element.getBoundingClientRect();
          return [box.left + box.width / 2, box.top + box.height / 2];
        }),
      );
    // full cache + snapkv, h2o, tova and knorm = l2norm at three budgets.
    expect(markers).toHaveLength(1 + 4 * 3);
    for (const [i, [x, y]] of markers.entries()) {
      for (const [ox, oy] of markers.slice(i + 1)) {
        expect(Math.abs(x! - ox!) > 4 || Math.abs(y! - oy!) > 4).toBe(true);
      }
    }
    const legend = await page.locator('#task-retrieval .legend-item').allTextContents();
    expect(legend).toContain('knorm = l2norm');
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
  });

  it('keeps every in-chart legend entry inside the figure, however long or many', async () => {
    const labels = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? `intero-to-0.3-warm-${i} (NGC greedy)`
        : `WWWWMMMM ${i} streaming-llm (no-evict)`,
    );
    const figure = renderChartFigure({
      id: 'long-legend',
      title: 'Long legend',
      caption: 'Twenty series with long labels.',
      xLabel: 'x',
      yLabel: 'y',
      yUnit: '',
      yFromZero: true,
      series: labels.map((label, i) => ({
        key: `s${i}`,
        label,
        color: '#1f77b4',
        dash: 'none',
        reference: false,
        points: [{ x: i, y: i, yError: 0, note: label }],
      })),
    });
    await page.setContent(`<!doctype html><html><body>${figure}</body></html>`);
    const fit = await page.locator('figure#long-legend svg').evaluate((svg) => {
      const box = (svg as SVGSVGElement).viewBox.baseVal;
      return Array.from(svg.querySelectorAll('.legend-item text'), (text) => {
        const b = (text as SVGTextElement).getBBox();
        return {
          right: b.x + b.width,
          bottom: b.y + b.height,
          width: box.width,
          height: box.height,
        };
      });
    });
    expect(fit).toHaveLength(20);
    for (const entry of fit) {
      expect(entry.right).toBeLessThanOrEqual(entry.width);
      expect(entry.bottom).toBeLessThanOrEqual(entry.height);
    }
  });
});
