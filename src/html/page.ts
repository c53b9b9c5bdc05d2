/** The shell of lookout's server-rendered pages: one document, one inline stylesheet allowed by its hash, no script. */
import { createHash } from 'node:crypto';
import { escapeHtml } from './escape.js';

/** The CSP source that allows exactly this inline stylesheet. */
export function styleSource(css: string): string {
  return `'sha256-${createHash('sha256').update(css).digest('base64')}'`;
}

/**
 * A served page's Content-Security-Policy header: no script at all, its one inline stylesheet allowed by hash (not
 * by 'unsafe-inline', so markup that slipped past escaping could not style the page either), no forms, no framing.
 */
export function pageCsp(css: string): string {
  return ["default-src 'none'", `style-src ${styleSource(css)}`, 'img-src data:', "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join('; ');
}

/** What a page is made of; `body` is trusted markup (its values escaped by the caller). */
export interface PageParts {
  title: string;
  css: string;
  /** Extra `<head>` markup (a refresh, a CSP for a file opened without a server). */
  head?: string;
  body: string;
}

/** The whole HTML document. */
export function htmlDocument(p: PageParts): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${p.head ? `${p.head}\n` : ''}<title>${escapeHtml(p.title)}</title>
<style>${p.css}</style>
</head>
<body>
${p.body}
</body>
</html>
`;
}
