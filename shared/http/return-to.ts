export const DEFAULT_RETURN_TO = '/account';

const BASE = 'http://self.invalid';
/** Enough for any double or triple encoding; a path still encoded after this many is refused. */
const MAX_DECODINGS = 4;

/**
 * A local path to return to after login; anything else becomes the account page. The value the
 * browser will follow must be a path on this host, however it is read:
 * - only printable ASCII (browsers drop tabs and newlines, which would turn `/\t/evil.example` into
 *   `//evil.example`), no backslash in the path (browsers read `\` as `/`);
 * - checked again after normalisation (`/.//evil.example` resolves to `//evil.example`);
 * - and the path once percent-decoded (as a server on the way might read it: `/%2F%2Fevil.example`,
 *   `/%5Cevil.example`, `/%252F%252F…`) must pass the same checks.
 * The query is not decoded: an authorization request's query carries encoded URLs.
 */
export function safeReturnTo(value: string | undefined): string {
  const local = value === undefined ? undefined : localPath(value);
  if (!local) return DEFAULT_RETURN_TO;
  let decoded = local.pathname;
  for (let i = 0; decoded.includes('%'); i++) {
    if (i === MAX_DECODINGS) return DEFAULT_RETURN_TO;
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      return DEFAULT_RETURN_TO;
    }
    if (!localPath(decoded)) return DEFAULT_RETURN_TO;
  }
  return `${local.pathname}${local.search}`;
}

/** The normalised path and query of `value` if it is a path on this host, before and after normalisation. */
function localPath(value: string): { pathname: string; search: string } | undefined {
  if (!isLocalPathSyntax(value.split('?')[0]!) || !/^[\x21-\x7e]*$/.test(value)) return undefined;
  const url = new URL(value, BASE);
  if (url.origin !== BASE || !isLocalPathSyntax(url.pathname)) return undefined;
  return { pathname: url.pathname, search: url.search };
}

/** One slash, then no second slash or backslash at the start, and no backslash anywhere. */
function isLocalPathSyntax(path: string): boolean {
  return /^\/(?![/\\])/.test(path) && !path.includes('\\');
}
