import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown.ts';

describe('renderMarkdown', () => {
  it.each([
    ['**bold** and `code`', '<p><strong>bold</strong> and <code>code</code></p>\n'],
    ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n'],
    ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>\n'],
    ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>\n'],
    ['[docs](https://example.com/a)', '<p><a href="https://example.com/a" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>\n'],
    // an image is not loaded on the reader's page: it stays a link
    ['![pixel](https://tracker.example/p.gif)', '<p>!<a href="https://tracker.example/p.gif" rel="noopener noreferrer nofollow" target="_blank">pixel</a></p>\n'],
    ['line one\nline two', '<p>line one<br>\nline two</p>\n'],
    ['"quoted" & <b>', '<p>&quot;quoted&quot; &amp; &lt;b&gt;</p>\n'],
  ])('%j', (text, html) => {
    expect(renderMarkdown(text)).toBe(html);
  });
});
