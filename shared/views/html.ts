import { createHash } from 'node:crypto';
import type { AppError } from '#shared/errors';
import type { HttpResult } from '#shared/http/responses';
import { FAVICON, LOGO_SVG, SERVICE_NAME, THEME_COLOURS } from '#shared/views/theme';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Tagged template: interpolated values are escaped unless they are already-rendered Html. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    const rendered = Array.isArray(value)
      ? value.map((v) => (v instanceof Html ? v.value : escapeHtml(v))).join('')
      : value instanceof Html ? value.value : escapeHtml(value);
    out += rendered + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

// One small stylesheet, inlined and allowed by its hash, so pages need no extra request. Mobile
// first: one column on a phone, wider cards from 40rem. Colours come only from the theme's variables.
const STYLESHEET = `
:root{${Object.entries(THEME_COLOURS).map(([name, value]) => `--${name}:${value}`).join(';')};color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--page)}
*,*::before,*::after{box-sizing:border-box}
body{margin:0;line-height:1.5;overflow-wrap:break-word}
a{color:var(--brand)}
:focus-visible{outline:3px solid var(--brand);outline-offset:2px}
.site{background:var(--surface);border-bottom:3px solid var(--brand-soft)}
.site>div{max-width:48rem;margin:0 auto;padding:.375rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:0 1rem}
.brand{display:flex;align-items:center;gap:.5rem;min-height:2.75rem;margin-right:auto;font-weight:700;color:var(--ink);text-decoration:none}
.mark{flex:none}.mark .tile{fill:var(--brand)}.mark .roof{fill:none;stroke:var(--brand-ink);stroke-width:2.2;stroke-linejoin:round}.mark .dot{fill:var(--brand-ink)}
.site nav{display:flex;flex-wrap:wrap;align-items:center;gap:0 1rem;font-size:.9375rem}
.site nav a,.site nav button.link{display:inline-block;padding:.5rem 0}
.who{display:none;color:var(--muted)}
main{max-width:36rem;margin:0 auto;padding:1rem .75rem}
.card{background:var(--surface);border:1px solid var(--line);border-radius:.75rem;padding:1rem 1.125rem;margin-bottom:1rem}
h1{font-size:1.375rem;line-height:1.25;margin:0 0 .75rem}
h2{font-size:1.125rem;margin:1.25rem 0 .5rem}
.card>h2:first-child{margin-top:0}
p{margin:.5rem 0}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=email],input[type=password],input[type=url],textarea,select{display:block;width:100%;min-height:2.75rem;padding:.5rem .625rem;border:1px solid var(--field);border-radius:.5rem;background:var(--surface);color:var(--ink);font:inherit}
input[type=checkbox],input[type=radio]{width:1.125rem;height:1.125rem;margin:0 .5rem 0 0;vertical-align:-.15rem}
fieldset{border:0;padding:0;margin:.75rem 0 0}legend{font-weight:600;padding:0}label.choice{font-weight:400;margin:.25rem 0}
details.devices summary{cursor:pointer;padding:.375rem 0;color:var(--brand)}.device-list{max-height:22rem;overflow-y:auto;border:1px solid var(--line);border-radius:.5rem;padding:0 .625rem}
textarea{min-height:4.5rem}
[aria-invalid=true]{border-color:var(--danger)}
button,.button{display:inline-block;min-height:2.75rem;margin-top:1rem;padding:.5rem 1.25rem;border-radius:.5rem;border:1px solid var(--brand);background:var(--brand);color:var(--brand-ink);font:inherit;font-weight:600;cursor:pointer;text-decoration:none;text-align:center}
button.secondary{background:var(--surface);color:var(--brand)}
button.danger{background:var(--surface);color:var(--danger);border-color:var(--danger)}
button.link{min-height:0;background:none;border:none;color:var(--brand);padding:0;margin:0;font-weight:400;text-decoration:underline}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
.actions button{flex:1 1 8rem}
.error{color:var(--danger);background:var(--danger-soft);border:1px solid var(--danger);padding:.5rem .75rem;border-radius:.5rem}
.notice{background:var(--brand-soft);border:1px solid var(--line);padding:.5rem .75rem;border-radius:.5rem}
.muted{color:var(--muted)}
span.error{background:none;border:0;padding:0}
.status{margin:0 0 .25rem;color:var(--muted);font-weight:600;letter-spacing:.04em;text-transform:uppercase;font-size:.875rem}
ul.apps{list-style:none;padding:0;margin:0}
ul.apps>li{border-top:1px solid var(--line);padding:.75rem 0}
ul.apps h3{font-size:1rem;margin:0}
ul.apps p{margin:.25rem 0 0}
ul.scopes{padding-left:1.25rem}
code,.secret{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.secret{display:block;background:var(--brand-soft);border:1px solid var(--line);padding:.5rem;border-radius:.5rem}
.secret.grouped{word-break:normal}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.4rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
form.inline{display:inline}
button.small{margin-top:0;padding:.25rem .75rem;white-space:nowrap}
table.deliveries td{overflow-wrap:normal}table.deliveries td:last-child{text-align:right}table.deliveries code{word-break:normal;overflow-wrap:anywhere}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
h3{font-size:1rem;margin:1.25rem 0 .25rem}
.pre{white-space:pre-wrap;word-break:break-word}
@media (min-width:40rem){
main{padding:2rem 1rem}
.card{padding:1.5rem 2rem}
h1{font-size:1.5rem}
.actions button{flex:none}
.who{display:inline}
}
`;
const STYLE_HASH = createHash('sha256').update(STYLESHEET).digest('base64');

export interface PageOptions {
  title: string;
  body: Html;
  status?: number;
  /** Origins a form on this page may be redirected to after submission (CSP form-action). */
  formTargets?: string[];
  cookies?: string[];
  /** Signed-in user's e-mail, shown in the header with a logout button. */
  signedInAs?: string;
  csrf?: string;
  /**
   * A script of this host the page loads (the passkey ceremonies): the CSP then allows scripts and
   * fetches of this host ('self') and nothing inline. Pages without one allow no script at all.
   */
  script?: string;
}

/** A complete HTML page with the security headers of DESIGN.md. */
export function page(options: PageOptions): HttpResult {
  const targets = ["'self'", ...(options.formTargets ?? [])].join(' ');
  const nav = options.signedInAs
    ? html`<a href="/account">Account</a><a href="/developer">Developer console</a>
      <form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="${options.csrf ?? ''}">
      <span class="who">${options.signedInAs}</span> <button class="link" type="submit">Sign out</button></form>`
    : html`<a href="/login">Sign in</a><a href="/signup">Create an account</a>`;
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · ${SERVICE_NAME}</title><link rel="icon" href="${FAVICON}"><style>${new Html(STYLESHEET)}</style>${options.script ? html`<script src="${options.script}" defer></script>` : ''}</head>
<body><header class="site"><div><a class="brand" href="/">${new Html(LOGO_SVG)}<span>${SERVICE_NAME}</span></a>
<nav aria-label="Account">${nav}</nav></div></header>
<main>${options.body}</main></body></html>`;
  return {
    statusCode: options.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; ${options.script ? "script-src 'self'; connect-src 'self'; " : ''}style-src 'sha256-${STYLE_HASH}'; img-src 'self' data:; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
    ...(options.cookies?.length ? { cookies: options.cookies } : {}),
    body: document.value,
  };
}

/** What an error page says above the error's own message, and what it suggests, by status. */
const ERROR_TEXTS: Record<number, { title: string; advice: string }> = {
  400: { title: 'Something went wrong', advice: 'Go back to the application or page you came from and start again. If it keeps happening, tell the application’s developer what this page says.' },
  401: { title: 'Please sign in', advice: 'Sign in, then try again.' },
  403: { title: 'Not allowed', advice: 'Reload the page you came from (a form may have expired) and try again, signed in with the right account.' },
  404: { title: 'Page not found', advice: 'Check the address for a typing mistake, or start again from the home page.' },
  405: { title: 'Not available this way', advice: 'This address exists, but not for this kind of request. Go back and use the page’s own links and buttons.' },
  413: { title: 'Too much to send', advice: 'Shorten what you entered and try again.' },
  415: { title: 'Something went wrong', advice: 'Go back, reload the page and try again.' },
  429: { title: 'Too many attempts', advice: 'Wait a moment, then try again.' },
  503: { title: 'Temporarily unavailable', advice: 'The service is busy or being repaired. Try again in a minute.' },
};
const SERVER_ERROR = { title: 'Something went wrong on our side', advice: 'It is not your mistake. Try again in a minute; if it keeps happening, tell the service’s operator.' };

/**
 * The page of an error a page handler threw, as the JSON wrapper maps it (toAppError): the same
 * status and headers (a 503's `Retry-After`, a 405's `Allow`), in the usual layout, saying the
 * status, what happened (the error's message), what to do, and the way home.
 */
export function errorPage(error: AppError): HttpResult {
  const text = ERROR_TEXTS[error.status] ?? (error.status >= 500 ? SERVER_ERROR : ERROR_TEXTS[400]!);
  const result = page({
    title: text.title,
    status: error.status,
    body: html`<div class="card"><p class="status">Error ${error.status}</p><h1>${text.title}</h1>
      <p class="error" role="alert">${error.message}</p>
      <h2>What you can do</h2><p>${text.advice}</p>
      <p><a class="button" href="/">Go to the home page</a></p></div>`,
  });
  return { ...result, headers: { ...error.headers, ...result.headers } };
}
