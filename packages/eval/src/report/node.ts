// Node-only (node:fs, node:path, and the Node entry of @lethe/model). Keep out of browser bundles.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@lethe/model/node';
import type { SweepResults } from '../harness/results';
import { renderHtml } from './html';
import { type ReportOptions, renderMarkdown } from './markdown';

/** Paths of the files {@link writeReport} wrote. */
export interface ReportFiles {
  /** `results.json`: the sweep results, pretty-printed. */
  readonly results: string;
  /** `report.md`: the Markdown report. */
  readonly markdown: string;
  /** `report.html`: the self-contained HTML report. */
  readonly html: string;
}

/**
 * Writes `results.json`, `report.md` and `report.html` into `dir` (created if missing), with
 * `options` as `renderMarkdown` takes them. Both
 * reports are rendered before anything is written, so malformed results leave `dir` untouched;
 * each file is then written atomically (temporary file, fsync, rename), so a reader never sees
 * a partial file.
 *
 * @throws LetheError `E_FORMAT` for malformed results; file-system errors as thrown by Node.
 */
export async function writeReport(
  dir: string,
  results: SweepResults,
  options: ReportOptions = {},
): Promise<ReportFiles> {
  const markdown = renderMarkdown(results, options);
  const html = renderHtml(results, options);
  const files: ReportFiles = {
    results: join(dir, 'results.json'),
    markdown: join(dir, 'report.md'),
    html: join(dir, 'report.html'),
  };
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(files.results, `${JSON.stringify(results, null, 2)}\n`);
  await writeFileAtomic(files.markdown, markdown);
  await writeFileAtomic(files.html, html);
  return files;
}
