import { describe, expect, it } from 'vitest';
import { escapeHtml, escapeMarkdown, markdownCode } from '../../src/report/index';

describe('escaping', () => {
  it('escapes the five HTML-significant characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('keeps Markdown table cells on one line and inert', () => {
    expect(escapeMarkdown('a|b *c* <b>\nd')).toBe('a\\|b \\*c\\* \\<b\\> d');
    expect(escapeMarkdown('[x](javascript:1)')).toBe('\\[x\\](javascript:1)');
  });

  it('fences code spans around backtick runs and escapes pipes', () => {
    expect(markdownCode('lethe eval --task a')).toBe('`lethe eval --task a`');
    expect(markdownCode('echo `x` | y')).toBe('``echo `x` \\| y``');
    expect(markdownCode('`start')).toBe('`` `start ``');
  });
});
