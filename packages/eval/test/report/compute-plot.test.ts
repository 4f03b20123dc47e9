import { describe, expect, it } from 'vitest';
import { renderHtml, reportPlots, reportRows } from '../../src/report/index';
import { fakeSweep } from './fixture';

describe('compute policies’ own plot', () => {
  const rows = reportRows(fakeSweep());

  it('draws the named policies against their net keep-rate beside the full cache, and only there', () => {
    for (const { view, charts } of reportPlots(rows, ['snapkv'])) {
      expect(charts.map((c) => c.id)).toEqual([
        `plot-${view.slug}-${view.metric.name}-budget`,
        `plot-${view.slug}-${view.metric.name}-peak`,
        `plot-${view.slug}-${view.metric.name}-net-keep-rate`,
      ]);
      for (const memory of charts.slice(0, 2)) {
        expect(memory.series.map((s) => s.key)).toEqual(['full', 'streaming-llm', 'h2o']);
      }
      const [full, snapkv] = charts[2]!.series;
      expect([full!.key, snapkv!.key]).toEqual(['full', 'snapkv']);
      expect(full!.points.map((p) => p.x)).toEqual([100]);
      const expected = rows
        .filter((row) => row.task === view.task && row.policy === 'snapkv')
        .map((row) => row.metrics.netKeepRate!.mean * 100);
      expect(snapkv!.points.map((p) => p.x).sort()).toEqual(expected.sort());
      expect(charts[2]!.xLabel).toBe('Net keep-rate');
    }
  });

  it('is absent without compute policies, and in the HTML report with them', () => {
    for (const { charts } of reportPlots(rows)) expect(charts).toHaveLength(2);
    const html = renderHtml(fakeSweep(), { computePolicies: ['snapkv'] });
    expect(html).toContain('id="plot-countdown-accuracy-net-keep-rate"');
    expect(renderHtml(fakeSweep())).not.toContain('net-keep-rate"');
  });
});
