import { describe, expect, it } from 'vitest';
import { DEFAULT_RETURN_TO, safeReturnTo } from '#shared/http/return-to';
import { OFF_SITE_RETURN_TOS } from '../support/return-to-attacks';

/** Whether a Location value, as a browser follows it from a page of this host, stays on it. */
function staysOnSite(location: string): boolean {
  const base = 'https://self.example/login';
  return new URL(location, base).origin === 'https://self.example';
}

describe('safeReturnTo', () => {
  it.each(OFF_SITE_RETURN_TOS)('refuses %j: the account page instead', (attack) => {
    expect(safeReturnTo(attack)).toBe(DEFAULT_RETURN_TO);
  });

  it.each([
    ['/account', '/account'],
    ['/developer/apps/0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d/secret', '/developer/apps/0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d/secret'],
    // An authorization request's query carries encoded URLs: the query is not the path.
    [
      '/oauth/authorize?client_id=c&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=%2F%2Fx%5C&scope=read_device',
      '/oauth/authorize?client_id=c&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=%2F%2Fx%5C&scope=read_device',
    ],
    ['/developer/./apps', '/developer/apps'],
    ['/developer/x/../apps', '/developer/apps'],
  ])('keeps the local path %j as %j', (value, expected) => {
    expect(safeReturnTo(value)).toBe(expected);
  });

  it.each([undefined, '', 'account', '?x=1', '#x'])('gives the account page for %j', (value) => {
    expect(safeReturnTo(value)).toBe(DEFAULT_RETURN_TO);
  });

  it('never returns a value a browser would follow off-site, whatever it is given', () => {
    const pieces = ['/', '\\', '.', '..', '%2F', '%2f', '%5C', '%2E', '%09', '\t', 'evil.example', '//', ':', '@', '%25', '?', '#'];
    let tried = 0;
    for (const a of pieces) for (const b of pieces) for (const c of pieces) {
      const value = `/${a}${b}${c}`;
      const result = safeReturnTo(value);
      tried++;
      expect(staysOnSite(result), `${JSON.stringify(value)} → ${result}`).toBe(true);
      expect(result, JSON.stringify(value)).toMatch(/^\/(?![/\\])/);
      expect(decodeURIComponentSafely(result.split('?')[0]!), JSON.stringify(value)).not.toMatch(/^\/*[/\\]{2}|\\/);
    }
    expect(tried).toBe(pieces.length ** 3);
  });
});

function decodeURIComponentSafely(value: string): string {
  let decoded = value;
  for (let i = 0; i < 3; i++) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      break;
    }
  }
  return decoded;
}
