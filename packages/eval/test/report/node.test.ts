import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SweepResults } from '../../src/harness/results';
import { renderHtml, renderMarkdown } from '../../src/report/index';
import { writeReport } from '../../src/report/node';
import { fakeSweep } from './fixture';

describe('writeReport', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lethe-eval-report-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes results.json, report.md and report.html and nothing else', async () => {
    const sweep = fakeSweep();
    const out = join(dir, 'nested', 'run');
    const files = await writeReport(out, sweep);
    expect(files).toEqual({
      results: join(out, 'results.json'),
      markdown: join(out, 'report.md'),
      html: join(out, 'report.html'),
    });
    expect((await readdir(out)).sort()).toEqual(['report.html', 'report.md', 'results.json']);
    expect(JSON.parse(await readFile(files.results, 'utf8'))).toEqual(sweep);
    expect(await readFile(files.markdown, 'utf8')).toBe(renderMarkdown(sweep));
    expect(await readFile(files.html, 'utf8')).toBe(renderHtml(sweep));
  });

  it('replaces earlier reports in place', async () => {
    await writeReport(dir, fakeSweep());
    const smaller: SweepResults = { ...fakeSweep(), cells: fakeSweep().cells.slice(0, 1) };
    await writeReport(dir, smaller);
    expect(JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')).cells).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual(['report.html', 'report.md', 'results.json']);
  });

  it('writes nothing when the results are malformed', async () => {
    const broken = { ...fakeSweep(), version: 99 } as unknown as SweepResults;
    await expect(writeReport(join(dir, 'out'), broken)).rejects.toBeInstanceOf(LetheError);
    expect(await readdir(dir)).toEqual([]);
  });
});
