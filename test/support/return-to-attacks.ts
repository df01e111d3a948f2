/**
 * Return paths that would send the browser off-site after login, once a browser (or a server on the
 * way that decodes) has read them: scheme-relative after normalisation, backslashes (browsers read
 * `\` as `/`), percent-encoded slashes, backslashes and dots, dropped tabs and newlines.
 */
export const OFF_SITE_RETURN_TOS = [
  '//evil.example',
  '//evil.example/account',
  '///evil.example',
  '/\\evil.example',
  '\\\\evil.example',
  '/.//evil.example',
  '/./\\evil.example',
  '/..//evil.example',
  '/a/../..//evil.example',
  '/%2F%2Fevil.example',
  '/%2f/evil.example',
  '/%2F/evil.example/account?x=1',
  '/%5Cevil.example',
  '/%5c%5cevil.example',
  '/%2E%2E//evil.example',
  '/%2e/%2fevil.example',
  '/.%2F/evil.example',
  '/%252F%252Fevil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/%09/evil.example',
  '/%0A/evil.example',
  '/%0d%0a/evil.example',
  'https://evil.example',
  'http:evil.example',
  'HTTPS://evil.example/account',
  'javascript:alert(1)',
  ' //evil.example',
  '/\u3002/evil.example',
  '/%E3%80%82/evil.example',
  '/%ZZ/evil.example',
];
