// The passkeys' relying party is the authorization server's host: its id the issuer's host name,
// its origin the issuer's origin, so a custom domain (auth.<domain>) carries its passkeys. Apart
// from shared/accounts/passkeys.ts, so that the composition root names it without loading the
// WebAuthn library into every bundle.

/** Who the passkeys are for: the authorization server as the browser sees it. */
export interface RelyingParty {
  /** The RP id: the issuer's host name (a passkey works on that host and its subdomains). */
  id: string;
  /** The only origin whose ceremonies are accepted: the issuer's. */
  origin: string;
  /** The name an authenticator shows. */
  name: string;
}

/** The relying party of an issuer URL (`https://auth.example.com` → id `auth.example.com`). */
export function relyingPartyOf(issuer: string, name: string): RelyingParty {
  const url = new URL(issuer);
  return { id: url.hostname, origin: url.origin, name };
}
