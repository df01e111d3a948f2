/** A validated authorization request (RFC 6749 §4.1.1, RFC 7636). */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  /** Required unless PKCE is used (RFC 9700 §2.1): then the verifier is the CSRF defence. */
  state?: string;
  scopes: string[];
  codeChallenge?: string;
}

/** The parameters of an authorization request, as hidden form fields carry them. */
export const AUTHORIZE_PARAMS = ['client_id', 'redirect_uri', 'state', 'scope', 'response_type', 'code_challenge', 'code_challenge_method'] as const;
