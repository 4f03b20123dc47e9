/**
 * Reports of `@lethe/eval`: pure string generation (Markdown, self-contained HTML with
 * hand-written SVG charts) from sweep results. The Node-only `writeReport` lives in `./node`.
 *
 * @packageDocumentation
 */
export {
  type BaselineComparison,
  type BestHeuristicOptions,
  compareToBestHeuristic,
} from './best-heuristic';
export type { ChartPoint, ChartSeries, ChartSpec } from './chart';
export { renderChartFigure } from './chart';
export { escapeHtml, escapeMarkdown, markdownCode } from './escape';
export { renderHtml } from './html';
export { type Interval, meanInterval, studentT95, wilsonInterval } from './interval';
export { type ReportOptions, renderMarkdown } from './markdown';
export { MARKER_SHAPES, type MarkerShape, type SeriesStyle } from './markers';
export { type LegendEntry, reportPlots, type TaskPlots } from './plots';
export { type ReportRow, type RowMetrics, reportRows } from './rows';
export { rowScore, SCORE_METRICS, type Score, type ScoreMetric } from './score';
export { standaloneSvg } from './standalone-svg';
export { suiteAverageLabel, suiteAverageRows } from './suite-average';
export { type ScoredRow, type ScoreView, scoreViews } from './views';
