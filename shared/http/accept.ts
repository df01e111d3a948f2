/**
 * Whether a request's `Accept` header asks for an HTML page rather than JSON: `text/html` (or
 * `text/*`) named with a higher quality than `application/json` (or `application/*`). A browser's
 * navigation names `text/html`; API clients send `application/json`, `*\/*` or nothing, and get JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  let html = 0;
  let json = 0;
  for (const range of (accept ?? '').split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!(quality > 0)) continue;
    if (type === 'text/html' || type === 'text/*') html = Math.max(html, quality);
    if (type === 'application/json' || type === 'application/*') json = Math.max(json, quality);
  }
  return html > json;
}
