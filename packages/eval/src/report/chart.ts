import { type Axis, logAxis, niceAxis, scale } from './axis';
import { dodgeOffsets } from './dodge';
import { escapeHtml } from './escape';
import type { Interval } from './interval';
import { glyphSvg, type MarkerShape, markerSvg } from './markers';

/** One measured point of a chart series. */
export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  /** Half-length of a symmetric vertical error bar, in y units (absent or 0: none). */
  readonly yError?: number;
  /** The error bar as bounds in y units (e.g. a Wilson interval); wins over `yError`. */
  readonly interval?: Interval;
  /**
   * A short label of the point (the budget it ran at). Points sharing a label that sit in one
   * column get the label once above the plot; otherwise each is labelled beside its marker.
   */
  readonly label?: string;
  /** A glyph drawn just left of the marker in the series' colour (▲ / ▼: a verdict), if any. */
  readonly mark?: string;
  /** Tooltip text of the point's marker. */
  readonly note: string;
}

/** A series of a chart: a line through its points or, for a reference, dashed levels. */
export interface ChartSeries {
  /** Stable identifier (the policy name), written to `data-series`. */
  readonly key: string;
  /** Legend text. */
  readonly label: string;
  readonly color: string;
  /** SVG `stroke-dasharray` of the line, `none` for solid. */
  readonly dash: string;
  /** Marker of its points (default `circle`). */
  readonly marker?: MarkerShape;
  /**
   * A reference (the full cache): each point is drawn as a marker with a dashed horizontal line
   * across the plot at its level, over a light band for its error bar, instead of being joined
   * to the others.
   */
  readonly reference: boolean;
  readonly points: readonly ChartPoint[];
}

/** Everything a chart figure shows. */
export interface ChartSpec {
  /** Element id of the `<figure>`. */
  readonly id: string;
  /** Accessible title (the `<title>` of the `<svg>`) and visible heading of the figure. */
  readonly title: string;
  /** Caption under the chart. */
  readonly caption: string;
  readonly xLabel: string;
  readonly yLabel: string;
  /** Suffix of the x tick labels (`%`; default none). */
  readonly xUnit?: string;
  /** Suffix of the y tick labels (`%`). */
  readonly yUnit: string;
  /** Whether a linear y axis starts at 0. */
  readonly yFromZero: boolean;
  /** Limits of a linear y axis's padding (e.g. `[0, 100]` for a percentage). */
  readonly yBounds?: readonly [number, number];
  /** Log₁₀ x axis (default linear; `wantsLog` of `./axis` tells when data ask for one). */
  readonly xLog?: boolean;
  /** Log₁₀ y axis (default linear). */
  readonly yLog?: boolean;
  /** Draw the legend inside the `<svg>`, right of the plot (default true). */
  readonly legend?: boolean;
  /** Spread markers that would coincide side by side (default false; see `dodgeOffsets`). */
  readonly dodge?: boolean;
  readonly series: readonly ChartSeries[];
}

const WIDTH = 720;
const HEIGHT = 376;
const LEFT = 68;
const RIGHT = 520;
const TOP = 28;
const BOTTOM = 320;
const FONT = 'font-family="system-ui, sans-serif" font-size="12"';
/** Legend geometry: first row, row pitch, text start after the plot, and a wide 12 px glyph. */
const LEGEND_TOP = TOP + 6;
const LEGEND_ROW = 22;
const LEGEND_TEXT = 52;
const LEGEND_GLYPH = 7.5;
/** Point labels in one column (px of spread) are written once above the plot. */
const COLUMN_SPREAD = 16;

/** A point placed on the plot, with its series. */
interface Placed {
  readonly series: ChartSeries;
  readonly point: ChartPoint;
  /** Pixel position, before any dodge. */
  readonly x: number;
  readonly y: number;
  /** Horizontal dodge, px. */
  dx: number;
}

/**
 * The SVG's size: without a legend the plot and its margins; with one 720 × 376, wider when a
 * legend label would run past the right edge and taller when the legend has more rows than the
 * plot's height holds.
 */
function chartSize(spec: ChartSpec): { width: number; height: number } {
  if (spec.legend === false) return { width: RIGHT + 16, height: HEIGHT };
  const longest = Math.max(0, ...spec.series.map((entry) => entry.label.length));
  return {
    width: Math.max(WIDTH, Math.ceil(RIGHT + LEGEND_TEXT + longest * LEGEND_GLYPH + 8)),
    height: Math.max(HEIGHT, LEGEND_TOP + spec.series.length * LEGEND_ROW),
  };
}

/**
 * Renders a chart as a `<figure>` holding a self-contained `<svg>` (title, description, grid,
 * axes with ticks and labels — linear, or log₁₀ on request —, one group per series with its
 * error bars and markers, point labels, and a legend unless turned off) and a `<figcaption>`.
 * Every text is escaped. A chart without points renders the caption and a note instead of an
 * empty plot.
 */
export function renderChartFigure(spec: ChartSpec): string {
  const id = escapeHtml(spec.id);
  const points = spec.series.flatMap((series) => series.points);
  const caption = `<figcaption><strong>${escapeHtml(spec.title)}.</strong> ${escapeHtml(spec.caption)}</figcaption>`;
  if (points.length === 0) {
    return `<figure id="${id}" class="plot"><p class="empty">No cell has the values this plot needs.</p>${caption}</figure>`;
  }
  const xValues = points.map((point) => point.x);
  const yValues = points
    .flatMap((point) => {
      const { low, high } = bar(point);
      return [point.y, low, high];
    })
    .filter((value) => !spec.yLog || value > 0);
  const xAxis = spec.xLog ? logAxis(xValues) : niceAxis(xValues);
  const yAxis = spec.yLog
    ? logAxis(yValues)
    : niceAxis(yValues, { fromZero: spec.yFromZero, bounds: spec.yBounds });
  const px = (x: number): number => scale(xAxis, x, LEFT, RIGHT);
  const py = (y: number): number =>
    scale(yAxis, Math.min(Math.max(y, yAxis.min), yAxis.max), BOTTOM, TOP);
  const placed: Placed[] = spec.series.flatMap((series) =>
    [...series.points]
      .sort((a, b) => a.x - b.x)
      .map((point) => ({ series, point, x: px(point.x), y: py(point.y), dx: 0 })),
  );
  if (spec.dodge === true) {
    const offsets = dodgeOffsets(placed, LEFT + 5, RIGHT - 5);
    placed.forEach((entry, i) => {
      entry.dx = offsets[i]!;
    });
  }
  const description =
    `${spec.yLabel} against ${spec.xLabel}: ` +
    spec.series.map((series) => `${series.label} (${series.points.length} points)`).join(', ');
  const { width, height } = chartSize(spec);
  const ordered = [
    ...spec.series.filter((series) => series.reference),
    ...spec.series.filter((series) => !series.reference),
  ];
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-labelledby="${id}-title ${id}-desc" ${FONT}>`,
    `<title id="${id}-title">${escapeHtml(spec.title)}</title>`,
    `<desc id="${id}-desc">${escapeHtml(description)}</desc>`,
    `<rect class="plot-area" x="${LEFT}" y="${TOP}" width="${RIGHT - LEFT}" height="${BOTTOM - TOP}" fill="#fff" stroke="#888"/>`,
    renderGridAndAxes(xAxis, yAxis, px, py, spec),
    renderPointLabels(placed),
    ...ordered.map((series) =>
      renderSeries(
        series,
        placed.filter((entry) => entry.series === series),
        py,
      ),
    ),
    spec.legend === false ? '' : renderLegend(spec.series),
    '</svg>',
  ]
    .filter((part) => part !== '')
    .join('\n');
  return `<figure id="${id}" class="plot">\n${svg}\n${caption}\n</figure>`;
}

/** The error bar of a point: its interval, or y ± yError. */
function bar(point: ChartPoint): { low: number; high: number } {
  if (point.interval !== undefined) return point.interval;
  const error = point.yError ?? 0;
  return { low: point.y - error, high: point.y + error };
}

function renderGridAndAxes(
  xAxis: Axis,
  yAxis: Axis,
  px: (x: number) => number,
  py: (y: number) => number,
  spec: ChartSpec,
): string {
  const xUnit = escapeHtml(spec.xUnit ?? '');
  const xTicks = xAxis.ticks.map((tick, i) => {
    const x = px(tick).toFixed(2);
    return (
      `<line class="grid" x1="${x}" y1="${TOP}" x2="${x}" y2="${BOTTOM}" stroke="#e5e5e5"/>` +
      `<line class="tick" x1="${x}" y1="${BOTTOM}" x2="${x}" y2="${BOTTOM + 5}" stroke="#333"/>` +
      `<text class="tick-label" x="${x}" y="${BOTTOM + 18}" text-anchor="middle">${xAxis.labels[i]}${xUnit}</text>`
    );
  });
  const yTicks = yAxis.ticks.map((tick, i) => {
    const y = py(tick).toFixed(2);
    return (
      `<line class="grid" x1="${LEFT}" y1="${y}" x2="${RIGHT}" y2="${y}" stroke="#e5e5e5"/>` +
      `<line class="tick" x1="${LEFT - 5}" y1="${y}" x2="${LEFT}" y2="${y}" stroke="#333"/>` +
      `<text class="tick-label" x="${LEFT - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${yAxis.labels[i]}${escapeHtml(spec.yUnit)}</text>`
    );
  });
  const middleY = (TOP + BOTTOM) / 2;
  const logNote = (log: boolean) => (log ? ' (log scale)' : '');
  return [
    `<g class="axis x-axis${xAxis.log ? ' log' : ''}">${xTicks.join('')}`,
    `<line x1="${LEFT}" y1="${BOTTOM}" x2="${RIGHT}" y2="${BOTTOM}" stroke="#333"/>`,
    `<text class="axis-label" x="${(LEFT + RIGHT) / 2}" y="${BOTTOM + 42}" text-anchor="middle">${escapeHtml(spec.xLabel + logNote(xAxis.log))}</text></g>`,
    `<g class="axis y-axis${yAxis.log ? ' log' : ''}">${yTicks.join('')}`,
    `<line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${BOTTOM}" stroke="#333"/>`,
    `<text class="axis-label" x="16" y="${middleY}" text-anchor="middle" transform="rotate(-90 16 ${middleY})">${escapeHtml(spec.yLabel + logNote(yAxis.log))}</text></g>`,
  ].join('\n');
}

/**
 * Point labels: a label whose points form one column (within {@link COLUMN_SPREAD} px before
 * dodging) is written once above the plot with a dotted guide down its column; the points of
 * a spread-out label are each labelled above-right of their marker.
 */
function renderPointLabels(placed: readonly Placed[]): string {
  const columns = new Map<string, Placed[]>();
  for (const entry of placed) {
    const label = entry.point.label;
    if (label === undefined) continue;
    columns.set(label, [...(columns.get(label) ?? []), entry]);
  }
  const parts = [...columns].map(([label, members]) => {
    const xs = members.map((entry) => entry.x);
    const text = escapeHtml(label);
    if (Math.max(...xs) - Math.min(...xs) <= COLUMN_SPREAD) {
      const x = ((Math.min(...xs) + Math.max(...xs)) / 2).toFixed(2);
      return (
        `<line class="column-guide" x1="${x}" y1="${TOP}" x2="${x}" y2="${BOTTOM}" stroke="#bbb" stroke-dasharray="1 3"/>` +
        `<text class="point-label column" x="${x}" y="${TOP - 8}" text-anchor="middle" fill="#555">${text}</text>`
      );
    }
    return members
      .map(
        (entry) =>
          `<text class="point-label" x="${(entry.x + entry.dx + 6).toFixed(2)}" y="${(entry.y - 6).toFixed(2)}" font-size="10" fill="#555">${text}</text>`,
      )
      .join('');
  });
  return `<g class="point-labels">${parts.join('')}</g>`;
}

function renderSeries(
  series: ChartSeries,
  placed: readonly Placed[],
  py: (y: number) => number,
): string {
  const color = escapeHtml(series.color);
  const stroke = `stroke="${color}" stroke-dasharray="${escapeHtml(series.dash)}"`;
  const lines = series.reference
    ? placed.map(({ point, y }) => {
        const { low, high } = bar(point);
        const band =
          high > low
            ? `<rect class="reference-band" x="${LEFT}" y="${py(high).toFixed(2)}" width="${RIGHT - LEFT}" height="${(py(low) - py(high)).toFixed(2)}" fill="${color}" fill-opacity="0.07"/>`
            : '';
        return `${band}<line class="reference-line" x1="${LEFT}" y1="${y.toFixed(2)}" x2="${RIGHT}" y2="${y.toFixed(2)}" ${stroke} stroke-width="1.5"/>`;
      })
    : [
        `<polyline class="series-line" points="${placed.map(({ x, y, dx }) => `${(x + dx).toFixed(2)},${y.toFixed(2)}`).join(' ')}" fill="none" ${stroke} stroke-width="2"/>`,
      ];
  const marks = placed.map(({ point, x, y, dx }) => {
    const at = x + dx;
    const { low, high } = bar(point);
    const errorBar =
      high > low
        ? `<line class="error-bar" x1="${at.toFixed(2)}" y1="${py(low).toFixed(2)}" x2="${at.toFixed(2)}" y2="${py(high).toFixed(2)}" stroke="${color}" stroke-width="1.2" stroke-opacity="0.6"/>`
        : '';
    const verdict =
      point.mark === undefined
        ? ''
        : `<text class="verdict-mark" x="${(at - 7).toFixed(2)}" y="${y.toFixed(2)}" text-anchor="end" dominant-baseline="middle" font-size="11" fill="${color}">${escapeHtml(point.mark)}</text>`;
    return (
      errorBar +
      markerSvg(
        series.marker ?? 'circle',
        at,
        y,
        series.color,
        'class="marker"',
        `<title>${escapeHtml(point.note)}</title>`,
      ) +
      verdict
    );
  });
  const kind = series.reference ? 'series reference' : 'series';
  return `<g class="${kind}" data-series="${escapeHtml(series.key)}" data-points="${placed.length}">${lines.join('')}${marks.join('')}</g>`;
}

function renderLegend(series: readonly ChartSeries[]): string {
  const items = series.map((entry, i) => {
    const y = LEGEND_TOP + i * LEGEND_ROW;
    const style = { color: entry.color, dash: entry.dash, marker: entry.marker ?? 'circle' };
    return (
      `<g class="legend-item" data-series="${escapeHtml(entry.key)}">` +
      glyphSvg(style, RIGHT + 16, y) +
      `<text x="${RIGHT + LEGEND_TEXT}" y="${y}" dominant-baseline="middle">${escapeHtml(entry.label)}</text></g>`
    );
  });
  return `<g class="legend">${items.join('')}</g>`;
}
