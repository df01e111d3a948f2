/** Debian's Chromium; no browser is ever downloaded. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * The flags of DESIGN.md: headless, no sandbox (containers), no GPU, no QUIC, and no network
 * beyond loopback (every other host name fails to resolve), so the browser can only reach what
 * we started. Used by the browser tests and `npm run screenshots`.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];
