/**
 * A browser as a person recognises it in a list of sign-ins or an alert ("Firefox on Windows"), from
 * its User-Agent header: the family and the system only, never the header itself (it is the
 * browser's to say, so it is shown as a hint, not as proof). At most 40 characters.
 */
export function describeBrowser(userAgent: string | undefined): string {
  const ua = userAgent ?? '';
  const browser = [
    ['Edg/', 'Edge'], ['OPR/', 'Opera'], ['Firefox/', 'Firefox'], ['FxiOS/', 'Firefox'], ['CriOS/', 'Chrome'], ['Chrome/', 'Chrome'],
    ['Chromium/', 'Chromium'], ['Safari/', 'Safari'], ['curl/', 'curl'],
  ].find(([marker]) => ua.includes(marker!))?.[1];
  const system = [
    ['iPhone', 'iPhone'], ['iPad', 'iPad'], ['Android', 'Android'], ['CrOS', 'ChromeOS'], ['Windows', 'Windows'], ['Mac OS X', 'macOS'],
    ['Macintosh', 'macOS'], ['Linux', 'Linux'],
  ].find(([marker]) => ua.includes(marker!))?.[1];
  if (!browser && !system) return 'An unknown browser';
  return `${browser ?? 'A browser'}${system ? ` on ${system}` : ''}`.slice(0, 40);
}
