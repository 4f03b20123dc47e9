/**
 * Reports of `@lethe/eval`: pure string generation (Markdown, self-contained HTML with
 * hand-written SVG charts) from sweep results. The Node-only `writeReport` lives in `./node`.
 *
 * @packageDocumentation
 */
export type { ChartPoint, ChartSeries, ChartSpec } from './chart';
export { renderChartFigure } from './chart';
export { escapeHtml, escapeMarkdown, markdownCode } from './escape';
export { renderHtml } from './html';
export { renderMarkdown } from './markdown';
export { reportPlots, type TaskPlots } from './plots';
export { type ReportRow, type RowMetrics, reportRows } from './rows';
