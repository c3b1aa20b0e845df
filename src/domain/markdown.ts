/**
 * Comments' Markdown as HTML a page may show as it is: markdown-it with raw HTML off (every `<` written is escaped)
 * and its link check on (no `javascript:`, `vbscript:`, `file:` or `data:` link but images), links opened apart from
 * the dashboard (`rel="noopener noreferrer nofollow"`, `target="_blank"`).
 */
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow');
  tokens[idx]!.attrSet('target', '_blank');
  return self.renderToken(tokens, idx, options);
};
// images would load from anywhere on the page of whoever reads the comment: shown as their text
md.disable('image');

export function renderMarkdown(text: string): string {
  return md.render(text);
}
