import { createHash } from 'node:crypto';
import type { AppError } from '#shared/errors';
import type { HttpResult } from '#shared/http/responses';

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

// One small stylesheet, inlined and allowed by its hash, so pages need no extra request.
const STYLESHEET = `
:root{--fg:#1d2433;--muted:#5b6477;--accent:#0b5cad;--bg:#f5f7fa;--card:#fff;--line:#d5dbe5;--danger:#a4262c;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
body{margin:0;line-height:1.5}
header{background:var(--card);border-bottom:1px solid var(--line);padding:.75rem 1rem;display:flex;gap:1rem;align-items:center;flex-wrap:wrap}
header .brand{font-weight:600;margin-right:auto;color:var(--fg);text-decoration:none}
a{color:var(--accent)}
main{max-width:40rem;margin:1.5rem auto;padding:0 1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:1.25rem 1.5rem;margin-bottom:1rem}
h1{font-size:1.4rem;margin:0 0 1rem}
h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=email],input[type=password],input[type=url],textarea,select{width:100%;box-sizing:border-box;padding:.55rem .6rem;border:1px solid #8a93a6;border-radius:.35rem;font:inherit}
textarea{min-height:4.5rem}
button,.button{display:inline-block;margin-top:1rem;padding:.55rem 1.1rem;border-radius:.35rem;border:1px solid var(--accent);background:var(--accent);color:#fff;font:inherit;cursor:pointer;text-decoration:none}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--danger);border-color:var(--danger)}
button.link{background:none;border:none;color:var(--accent);padding:0;margin:0;text-decoration:underline}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
.error{color:var(--danger);background:#fdecee;border:1px solid #f1b7bc;padding:.6rem .8rem;border-radius:.35rem}
.notice{background:#eaf3fc;border:1px solid #b7d3f1;padding:.6rem .8rem;border-radius:.35rem}
.muted{color:var(--muted)}
span.error{background:none;border:0;padding:0}
ul.apps{list-style:none;padding:0;margin:0}
ul.apps>li{border-top:1px solid var(--line);padding:.75rem 0}
ul.apps ul{list-style:disc}
ul.apps h3{font-size:1rem;margin:0}
ul.apps p{margin:.25rem 0 0}
.card>h2:first-child{margin-top:0}
td{overflow-wrap:anywhere}
ul.scopes{padding-left:1.2rem}
code,.secret{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.secret{display:block;background:#fff8e1;border:1px solid #f0d48a;padding:.5rem;border-radius:.35rem}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.4rem;border-bottom:1px solid var(--line);vertical-align:top}
form.inline{display:inline}
.pre{white-space:pre-wrap;word-break:break-word}
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
}

/** A complete HTML page with the security headers of DESIGN.md. */
export function page(options: PageOptions): HttpResult {
  const targets = ["'self'", ...(options.formTargets ?? [])].join(' ');
  const nav = options.signedInAs
    ? html`<a href="/account">Account</a><a href="/developer">Developer console</a>
      <form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="${options.csrf ?? ''}">
      <span class="muted">${options.signedInAs}</span> <button class="link" type="submit">Sign out</button></form>`
    : html`<a href="/login">Sign in</a><a href="/signup">Create an account</a>`;
  const document = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Device and User Service</title><style>${new Html(STYLESHEET)}</style></head>
<body><header><a class="brand" href="/account">Device and User Service</a><nav class="actions">${nav}</nav></header>
<main>${options.body}</main></body></html>`;
  return {
    statusCode: options.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self' data:; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
    ...(options.cookies?.length ? { cookies: options.cookies } : {}),
    body: document.value,
  };
}

/**
 * The page of an error a page handler threw, as the JSON wrapper maps it (toAppError): the same
 * status and headers (a 503's `Retry-After`, a 405's `Allow`), and its message in the usual layout.
 */
export function errorPage(error: AppError): HttpResult {
  const result = page({
    title: 'Something went wrong',
    status: error.status,
    body: html`<div class="card"><h1>Something went wrong</h1><p class="error" role="alert">${error.message}</p></div>`,
  });
  return { ...result, headers: { ...error.headers, ...result.headers } };
}
