// @simplewebauthn/server's two checks, bundled on their own beside the functions that verify a
// passkey's answer (their `lazyModules`) and imported on first use by shared/accounts/passkeys.ts:
// the library (its CBOR, COSE, ASN.1 and attestation formats) is larger than the rest of such a
// function, and a cold start that verifies nothing (a refused form, a page) need not load it.
export { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
