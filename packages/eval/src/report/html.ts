import type { SweepResults } from '../harness/results';
import { renderChartFigure } from './chart';
import { escapeHtml } from './escape';
import { reportPlots } from './plots';
import { reportRows } from './rows';
import { COMMAND_HEADER, summaryLine, TABLE_COLUMNS } from './table';

const STYLE = `
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: #1a1a1a; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.6em; margin: 0 0 8px; }
h2 { font-size: 1.3em; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 1.1em; margin: 24px 0 8px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; white-space: nowrap; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td code { font-size: 12px; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
figure.plot { margin: 0; background: #fff; border: 1px solid #ddd; padding: 8px; max-width: 720px; }
figure.plot svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: #444; margin-top: 4px; }
pre { background: #fff; border: 1px solid #ddd; padding: 8px; overflow-x: auto; }
`;

/**
 * A self-contained HTML report of a sweep: inline CSS, no scripts and no external assets (a
 * Content-Security-Policy forbids both), the results table of `renderMarkdown` as an HTML
 * table, per task hand-written SVG charts (accuracy vs peak KV entries; perplexity vs net
 * keep-rate when the task has perplexity), each a `<figure id="plot-<task>-<kind>">` whose
 * `<svg>` has a `<title>`, and the sweep configuration. All text from the results is escaped.
 *
 * @throws LetheError `E_FORMAT` for malformed results (see `reportRows`).
 */
export function renderHtml(results: SweepResults): string {
  const rows = reportRows(results);
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
  const plots = reportPlots(rows).map(
    ({ task, charts }) =>
      `<section class="task-plots"><h3>${escapeHtml(task)}</h3>\n<div class="plots">\n` +
      `${charts.map(renderChartFigure).join('\n')}\n</div></section>`,
  );
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
<p class="summary">${escapeHtml(summaryLine(results, rows))}</p>
<section id="results">
<h2>Results</h2>
<div class="table-wrap">
<table>
<thead><tr>${header}</tr></thead>
<tbody>
${body.join('\n')}
</tbody>
</table>
</div>
</section>
<section id="plots">
<h2>Plots</h2>
${plots.join('\n')}
</section>
<section id="config">
<h2>Configuration</h2>
<pre>${escapeHtml(JSON.stringify(results.config, null, 2) ?? 'null')}</pre>
</section>
</main>
</body>
</html>
`;
}
