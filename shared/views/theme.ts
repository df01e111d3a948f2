/**
 * The service's identity on every page it renders (sign-in, consent, sign-up, account, developer
 * console, error pages): its name, its logo mark and its colours. This file is the one place an
 * operator changes them; the stylesheet (shared/views/html.ts) uses only these variables, and its
 * CSP hash is computed from whatever they are. Keep text colours at a contrast of 4.5:1 or more
 * against `surface` and `page` (WCAG AA): the browser tests check every page with axe.
 */
export const SERVICE_NAME = 'Device and User Service';

/** The colours, as CSS custom properties on `:root` (`brand` becomes `--brand`, and so on). */
export const THEME_COLOURS = {
  /** Buttons, links, the logo mark's tile, the focus ring. */
  brand: '#3346c8',
  /** Text and the logo's drawing on `brand`. */
  'brand-ink': '#ffffff',
  /** A light tint of `brand`: notices, the header's underline. */
  'brand-soft': '#eef0fc',
  /** Body text. */
  ink: '#1d2433',
  /** Secondary text (hints, dates). */
  muted: '#5b6477',
  /** The page behind the cards. */
  page: '#f4f5fb',
  /** Cards and the header. */
  surface: '#ffffff',
  /** Borders and rules. */
  line: '#d5dbe5',
  /** Form field borders (3:1 against `surface`, as WCAG asks of controls). */
  field: '#7d8699',
  /** Errors and destructive buttons, on `danger-soft`. */
  danger: '#b42318',
  'danger-soft': '#fef3f2',
} as const;

/**
 * The logo mark: a house on a rounded tile, drawn inline (no request, nothing for the CSP to allow)
 * in the theme's colours. Decorative: the service's name always stands next to it.
 */
export const LOGO_SVG = '<svg class="mark" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">'
  + '<rect class="tile" width="32" height="32" rx="8"/>'
  + '<path class="roof" d="M8 15.5 16 9l8 6.5V23.5a1.5 1.5 0 0 1-1.5 1.5h-13A1.5 1.5 0 0 1 8 23.5z"/>'
  + '<circle class="dot" cx="16" cy="19" r="2.5"/></svg>';

/** The same mark as a favicon (a data: URL, which the pages' `img-src` allows): no /favicon.ico request. */
export const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="${THEME_COLOURS.brand}"/>`
  + `<path d="M8 15.5 16 9l8 6.5V23.5a1.5 1.5 0 0 1-1.5 1.5h-13A1.5 1.5 0 0 1 8 23.5z" fill="none" stroke="${THEME_COLOURS['brand-ink']}" stroke-width="2.2" stroke-linejoin="round"/>`
  + `<circle cx="16" cy="19" r="2.5" fill="${THEME_COLOURS['brand-ink']}"/></svg>`,
)}`;
