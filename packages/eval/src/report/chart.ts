import { type Axis, niceAxis, scale } from './axis';
import { escapeHtml } from './escape';

/** One measured point of a chart series. */
export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  /** Half-length of the vertical error bar (±1 standard error), in y units. */
  readonly yError: number;
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
  /**
   * A reference (the full cache): each point is drawn as a marker with a dashed horizontal line
   * across the plot at its level instead of being joined to the others.
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
  /** Suffix of the y tick labels (`%`). */
  readonly yUnit: string;
  /** Whether the y axis starts at 0. */
  readonly yFromZero: boolean;
  readonly series: readonly ChartSeries[];
}

const WIDTH = 720;
const HEIGHT = 420;
const LEFT = 72;
const RIGHT = 530;
const TOP = 20;
const BOTTOM = 360;
const FONT = 'font-family="system-ui, sans-serif" font-size="12"';
/** Legend geometry: first row, row pitch, text start after the plot, and a wide 12 px glyph. */
const LEGEND_TOP = TOP + 12;
const LEGEND_ROW = 22;
const LEGEND_TEXT = 52;
const LEGEND_GLYPH = 7.5;

/**
 * The SVG's size: 720 × 420, wider when a legend label would run past the right edge and taller
 * when the legend has more rows than the plot's height holds.
 */
function chartSize(series: readonly ChartSeries[]): { width: number; height: number } {
  const longest = Math.max(0, ...series.map((entry) => entry.label.length));
  return {
    width: Math.max(WIDTH, Math.ceil(RIGHT + LEGEND_TEXT + longest * LEGEND_GLYPH + 8)),
    height: Math.max(HEIGHT, LEGEND_TOP + series.length * LEGEND_ROW),
  };
}

/**
 * Renders a chart as a `<figure>` holding a self-contained `<svg>` (title, description, grid,
 * axes with ticks and labels, one group per series, a legend) and a `<figcaption>`. Every text
 * is escaped. A chart without points renders the caption and a note instead of an empty plot.
 */
export function renderChartFigure(spec: ChartSpec): string {
  const id = escapeHtml(spec.id);
  const points = spec.series.flatMap((series) => series.points);
  const caption = `<figcaption><strong>${escapeHtml(spec.title)}.</strong> ${escapeHtml(spec.caption)}</figcaption>`;
  if (points.length === 0) {
    return `<figure id="${id}" class="plot"><p class="empty">No cell has the values this plot needs.</p>${caption}</figure>`;
  }
  const xAxis = niceAxis(points.map((point) => point.x));
  const yAxis = niceAxis(
    points.flatMap((point) => [point.y - point.yError, point.y + point.yError]),
    { fromZero: spec.yFromZero },
  );
  const px = (x: number): string => scale(xAxis, x, LEFT, RIGHT).toFixed(2);
  const py = (y: number): string => scale(yAxis, y, BOTTOM, TOP).toFixed(2);
  const description =
    `${spec.yLabel} against ${spec.xLabel}: ` +
    spec.series.map((series) => `${series.label} (${series.points.length} points)`).join(', ');
  const { width, height } = chartSize(spec.series);
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-labelledby="${id}-title ${id}-desc" ${FONT}>`,
    `<title id="${id}-title">${escapeHtml(spec.title)}</title>`,
    `<desc id="${id}-desc">${escapeHtml(description)}</desc>`,
    `<rect class="plot-area" x="${LEFT}" y="${TOP}" width="${RIGHT - LEFT}" height="${BOTTOM - TOP}" fill="#fff" stroke="#888"/>`,
    renderGridAndAxes(xAxis, yAxis, px, py, spec),
    ...spec.series.map((series) => renderSeries(series, px, py)),
    renderLegend(spec.series),
    '</svg>',
  ].join('\n');
  return `<figure id="${id}" class="plot">\n${svg}\n${caption}\n</figure>`;
}

function renderGridAndAxes(
  xAxis: Axis,
  yAxis: Axis,
  px: (x: number) => string,
  py: (y: number) => string,
  spec: ChartSpec,
): string {
  const xTicks = xAxis.ticks.map((tick) => {
    const x = px(tick);
    return (
      `<line class="grid" x1="${x}" y1="${TOP}" x2="${x}" y2="${BOTTOM}" stroke="#e5e5e5"/>` +
      `<line class="tick" x1="${x}" y1="${BOTTOM}" x2="${x}" y2="${BOTTOM + 5}" stroke="#333"/>` +
      `<text class="tick-label" x="${x}" y="${BOTTOM + 19}" text-anchor="middle">${tick.toFixed(xAxis.decimals)}</text>`
    );
  });
  const yTicks = yAxis.ticks.map((tick) => {
    const y = py(tick);
    return (
      `<line class="grid" x1="${LEFT}" y1="${y}" x2="${RIGHT}" y2="${y}" stroke="#e5e5e5"/>` +
      `<line class="tick" x1="${LEFT - 5}" y1="${y}" x2="${LEFT}" y2="${y}" stroke="#333"/>` +
      `<text class="tick-label" x="${LEFT - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${tick.toFixed(yAxis.decimals)}${escapeHtml(spec.yUnit)}</text>`
    );
  });
  const middleY = (TOP + BOTTOM) / 2;
  return [
    `<g class="axis x-axis">${xTicks.join('')}`,
    `<line x1="${LEFT}" y1="${BOTTOM}" x2="${RIGHT}" y2="${BOTTOM}" stroke="#333"/>`,
    `<text class="axis-label" x="${(LEFT + RIGHT) / 2}" y="${BOTTOM + 42}" text-anchor="middle">${escapeHtml(spec.xLabel)}</text></g>`,
    `<g class="axis y-axis">${yTicks.join('')}`,
    `<line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${BOTTOM}" stroke="#333"/>`,
    `<text class="axis-label" x="16" y="${middleY}" text-anchor="middle" transform="rotate(-90 16 ${middleY})">${escapeHtml(spec.yLabel)}</text></g>`,
  ].join('\n');
}

function renderSeries(
  series: ChartSeries,
  px: (x: number) => string,
  py: (y: number) => string,
): string {
  const points = [...series.points].sort((a, b) => a.x - b.x);
  const stroke = `stroke="${escapeHtml(series.color)}" stroke-dasharray="${escapeHtml(series.dash)}"`;
  const lines = series.reference
    ? points.map(
        (point) =>
          `<line class="reference-line" x1="${LEFT}" y1="${py(point.y)}" x2="${RIGHT}" y2="${py(point.y)}" ${stroke} stroke-width="1.5"/>`,
      )
    : [
        `<polyline class="series-line" points="${points.map((point) => `${px(point.x)},${py(point.y)}`).join(' ')}" fill="none" ${stroke} stroke-width="2"/>`,
      ];
  const marks = points.map((point) => {
    const x = px(point.x);
    const errorBar =
      point.yError > 0
        ? `<line class="error-bar" x1="${x}" y1="${py(point.y - point.yError)}" x2="${x}" y2="${py(point.y + point.yError)}" stroke="${escapeHtml(series.color)}"/>`
        : '';
    return `${errorBar}<circle class="marker" cx="${x}" cy="${py(point.y)}" r="4" fill="${escapeHtml(series.color)}"><title>${escapeHtml(point.note)}</title></circle>`;
  });
  const kind = series.reference ? 'series reference' : 'series';
  return `<g class="${kind}" data-series="${escapeHtml(series.key)}" data-points="${points.length}">${lines.join('')}${marks.join('')}</g>`;
}

function renderLegend(series: readonly ChartSeries[]): string {
  const items = series.map((entry, i) => {
    const y = LEGEND_TOP + i * LEGEND_ROW;
    const stroke = `stroke="${escapeHtml(entry.color)}" stroke-dasharray="${escapeHtml(entry.dash)}"`;
    return (
      `<g class="legend-item" data-series="${escapeHtml(entry.key)}">` +
      `<line x1="${RIGHT + 16}" y1="${y}" x2="${RIGHT + 44}" y2="${y}" ${stroke} stroke-width="2"/>` +
      `<circle cx="${RIGHT + 30}" cy="${y}" r="4" fill="${escapeHtml(entry.color)}"/>` +
      `<text x="${RIGHT + LEGEND_TEXT}" y="${y}" dominant-baseline="middle">${escapeHtml(entry.label)}</text></g>`
    );
  });
  return `<g class="legend">${items.join('')}</g>`;
}
