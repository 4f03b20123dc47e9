import type { SweepResults } from '../harness/results';
import { BASELINE_HEADER, BASELINE_NUMERIC, baselineCaption, baselineRows } from './baseline-table';
import type { BaselineComparison } from './best-heuristic';
import { renderChartFigure } from './chart';
import {
  type CompactTable,
  compactTable,
  compactTableCaption,
  identicalNote,
} from './compact-table';
import { escapeHtml } from './escape';
import { formatBudget, formatInterval, formatScore } from './format';
import { renderLegend } from './legend';
import type { ReportOptions } from './markdown';
import { reportPlots, type TaskPlots } from './plots';
import { type ReportRow, reportRows } from './rows';
import { rowsWithAverage } from './suite-average';
import { summaryParagraphs } from './summary';
import { COMMAND_HEADER, TABLE_COLUMNS } from './table';

const STYLE = `
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: #1a1a1a; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.6em; margin: 0 0 8px; }
h2 { font-size: 1.3em; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 1.1em; margin: 16px 0 8px; }
p { max-width: 75em; }
nav a { color: #0b5394; }
.legend { list-style: none; margin: 8px 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 18px; }
.legend li { display: flex; align-items: center; gap: 6px; }
.aside, .ci, .sub { color: #666; font-weight: normal; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
figure.plot { flex: 0 1 554px; box-sizing: border-box; margin: 0; background: #fff; border: 1px solid #ddd; padding: 8px; }
figure.plot svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 12px; color: #444; margin-top: 4px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; white-space: nowrap; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.compact { margin-top: 4px; }
table.compact .sub { display: block; font-size: 11px; }
table.compact .ci { font-size: 11px; margin-left: 4px; }
table.compact tr.reference td { text-align: center; background: #f7f7f7; }
td code { font-size: 12px; }
.note { font-size: 13px; color: #444; }
.table-scroll { overflow: auto; max-height: 30em; border: 1px solid #ddd; background: #fff; }
.table-scroll table { border: 0; }
.table-scroll thead th { position: sticky; top: 0; z-index: 1; }
pre { background: #fff; border: 1px solid #ddd; padding: 8px; overflow-x: auto; }
`;

/**
 * A self-contained HTML report of a sweep (inline CSS, no scripts, no external assets: a
 * Content-Security-Policy forbids both). In order:
 *
 * - one line of what was swept, and links to the sections;
 * - per task — the suite average first, given `options.averageOver` — a `<section id="task-<slug>">` with, per score (accuracy, perplexity), the legend
 *   its plots share, two hand-written SVG plots (`reportPlots`: score vs realised budget and vs
 *   peak KV memory, each a `<figure id="plot-<slug>-<score>-budget|peak">` whose `<svg>` has
 *   a `<title>`), and the policy × budget table (`<table class="compact">`); given
 *   `options.comparisons`, each policy against the best heuristic (`<table class="baseline">`)
 *   and its verdicts marked in the plots and the table;
 * - `<section id="how-to-read">`: the budget rule, how intervals are computed and what the
 *   suite average is — plots before prose;
 * - `<section id="all-rows">`: every row with all metrics and the commands that reproduce it,
 *   scrolling inside its own box;
 * - the sweep configuration, folded.
 *
 * All text from the results is escaped.
 *
 * @throws LetheError `E_FORMAT` for malformed results (see `reportRows`).
 */
export function renderHtml(results: SweepResults, options: ReportOptions = {}): string {
  const rows = reportRows(results);
  const { shown, paragraph } = rowsWithAverage(rows, options.averageOver);
  const comparisons = options.comparisons ?? [];
  const plots = reportPlots(shown, options.computePolicies, comparisons);
  const tasks = [...new Set(plots.map((entry) => entry.view.task))].map((task) => {
    const own = plots.filter((entry) => entry.view.task === task);
    return { task, id: `task-${own[0]!.view.slug}`, own };
  });
  const sections = tasks.map(
    ({ task, id, own }) =>
      `<section class="task" id="${escapeHtml(id)}">\n<h2>${escapeHtml(task)}</h2>\n` +
      own
        .map((entry) => renderScore(entry, own.length > 1, comparisons, options.computePolicies))
        .join('\n') +
      renderBaseline(
        comparisons.filter((c) => c.task === task),
        options.alpha ?? 0.05,
      ) +
      '\n</section>',
  );
  // Plots before prose: one line of what the sweep holds, the sections, then the method.
  const [overview, ...method] = [...summaryParagraphs(results, rows), paragraph];
  const links = [
    ...tasks.map(({ task, id }) => [id, task] as const),
    ['how-to-read', 'how to read it'] as const,
    ['all-rows', 'all rows'] as const,
    ['config', 'configuration'] as const,
  ].map(([id, text]) => `<a href="#${escapeHtml(id)}">${escapeHtml(text)}</a>`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Lethe evaluation report</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Lethe evaluation report</h1>
<p class="summary">${escapeHtml(overview)}</p>
<nav>${links.join(' · ')}</nav>
${sections.join('\n')}
<section id="how-to-read">
<h2>How to read it</h2>
${method
  .filter((text) => text !== '')
  .map((text) => `<p class="summary">${escapeHtml(text)}</p>`)
  .join('\n')}
</section>
<section id="all-rows">
<h2>All rows</h2>
<p class="note">One row per task, policy and budget (seeds pooled), with every metric and the <code>lethe eval</code> command that recomputes each of its cells.</p>
${renderFullTable(rows)}
</section>
<section id="config">
<h2>Configuration</h2>
<details><summary>The sweep configuration (JSON)</summary>
<pre>${escapeHtml(JSON.stringify(results.config, null, 2) ?? 'null')}</pre>
</details>
</section>
</main>
</body>
</html>
`;
}

/** A task's comparisons with the best heuristic as a table ('' without any). */
function renderBaseline(comparisons: readonly BaselineComparison[], alpha: number): string {
  if (comparisons.length === 0) return '';
  const cell = (text: string, i: number) =>
    `<td${BASELINE_NUMERIC[i] ? ' class="num"' : ''}>${escapeHtml(text)}</td>`;
  return (
    '\n<h3>Against the best heuristic</h3>\n' +
    `<p class="note">${escapeHtml(baselineCaption(alpha))}</p>\n` +
    '<table class="baseline">\n<thead><tr>' +
    BASELINE_HEADER.map((column) => `<th scope="col">${escapeHtml(column)}</th>`).join('') +
    '</tr></thead>\n<tbody>\n' +
    baselineRows(comparisons)
      .map((row) => `<tr>${row.map(cell).join('')}</tr>`)
      .join('\n') +
    '\n</tbody>\n</table>'
  );
}

/** One score of a task: its legend, its two plots, its policy × budget table and notes. */
function renderScore(
  plots: TaskPlots,
  withHeading: boolean,
  comparisons: readonly BaselineComparison[],
  computePolicies: readonly string[] = [],
): string {
  const { view } = plots;
  const table = compactTable(view, comparisons, computePolicies);
  const note = identicalNote(view);
  return [
    withHeading ? `<h3>${escapeHtml(view.metric.label)}</h3>` : '',
    renderLegend(plots.legend),
    `<div class="plots">\n${plots.charts.map(renderChartFigure).join('\n')}\n</div>`,
    renderCompactTable(plots, table),
    note === '' ? '' : `<p class="note identical">${escapeHtml(note)}</p>`,
  ]
    .filter((part) => part !== '')
    .join('\n');
}

function renderCompactTable({ view }: TaskPlots, table: CompactTable): string {
  const { metric } = view;
  const header = table.budgets
    .map(
      (budget, i) =>
        `<th scope="col">${formatBudget(budget)}` +
        (table.realised[i] === '' ? '' : `<span class="sub">realised ${table.realised[i]}</span>`) +
        '</th>',
    )
    .join('');
  const full =
    table.full === undefined
      ? ''
      : `<tr class="reference"><th scope="row">full cache</th><td colspan="${table.budgets.length}">` +
        `${escapeHtml(formatScore(table.full, metric))}<span class="ci">${escapeHtml(formatInterval(table.full, metric))}</span> at 100%</td></tr>\n`;
  const body = table.rows.map((row) => {
    const cells = row.cells.map((cell) => {
      if (cell === undefined) return '<td class="num">—</td>';
      const value = escapeHtml(formatScore(cell.score, metric));
      return (
        `<td class="num${cell.best ? ' best' : ''}">${cell.best ? `<strong>${value}</strong>` : value}` +
        (cell.mark ? ` <span class="mark">${cell.mark}</span>` : '') +
        `<span class="ci">${escapeHtml(formatInterval(cell.score, metric))}</span></td>`
      );
    });
    return `<tr data-policy="${escapeHtml(row.policy)}"><th scope="row">${escapeHtml(row.label)}</th>${cells.join('')}</tr>`;
  });
  const id = `table-${escapeHtml(view.slug)}-${view.metric.name}`;
  return (
    `<p class="note" id="${id}-about">${escapeHtml(compactTableCaption(view, table))}</p>\n` +
    `<table class="compact" id="${id}" aria-describedby="${id}-about">\n` +
    `<thead><tr><th scope="col">policy</th>${header}</tr></thead>\n` +
    `<tbody>\n${full}${body.join('\n')}\n</tbody>\n</table>`
  );
}

function renderFullTable(rows: readonly ReportRow[]): string {
  const header = [...TABLE_COLUMNS.map((column) => column.header), COMMAND_HEADER]
    .map((name) => `<th scope="col">${escapeHtml(name)}</th>`)
    .join('');
  const body = rows.map((row) => {
    const cells = TABLE_COLUMNS.map(
      (column) => `<td${column.numeric ? ' class="num"' : ''}>${escapeHtml(column.cell(row))}</td>`,
    );
    const commands = row.commands.map((command) => `<code>${escapeHtml(command)}</code>`);
    return `<tr>${cells.join('')}<td>${commands.join('<br>')}</td></tr>`;
  });
  return (
    '<div class="table-scroll" tabindex="0" role="region" aria-label="All rows">\n<table class="full">\n' +
    `<thead><tr>${header}</tr></thead>\n<tbody>\n${body.join('\n')}\n</tbody>\n</table>\n</div>`
  );
}
