import type { ClaimRepo } from '#shared/data/claim-repo';
import type { ClientRepo } from '#shared/data/client-repo';
import type { DeviceGrantRepo } from '#shared/data/device-grant-repo';
import type { DeviceRepo } from '#shared/data/device-repo';
import type { ErasureRepo } from '#shared/data/erasure-repo';
import type { FactorRepo } from '#shared/data/factor-repo';
import type { FactorSummaryRepo } from '#shared/data/factor-summary-repo';
import type { GrantRepo } from '#shared/data/grant-repo';
import type { KnownBrowserRepo } from '#shared/data/known-browser-repo';
import type { LinkRepo } from '#shared/data/link-repo';
import type { MailLimitRepo } from '#shared/data/mail-limit-repo';
import type { PasskeyRepo } from '#shared/data/passkey-repo';
import type { PresenceRepo } from '#shared/data/presence-repo';
import type { RecoveryCodeRepo } from '#shared/data/recovery-code-repo';
import type { SerialRepo } from '#shared/data/serial-repo';
import type { SessionRepo } from '#shared/data/session-repo';
import type { ShadowRepo } from '#shared/data/shadow-repo';
import type { SigningKeyRepo } from '#shared/data/signing-key-repo';
import type { ThrottleRepo } from '#shared/data/throttle-repo';
import type { UserRepo } from '#shared/data/user-repo';
import type { WebhookRepo } from '#shared/data/webhook-repo';

// How a service says which repository operations it uses, once: a constant (`LOGIN_USES = { throttle:
// ['reserve', …], … } as const satisfies UsesDeclaration`) from which both its parameter's type
// (`Uses<typeof LOGIN_USES>`: calling an operation it did not declare does not compile) and its
// functions' grants (functions/needs.ts usesOf) are made. Types only: no repository is built here.

/** Every repository, under the name shared/runtime.ts gives the one it builds. */
export interface Repos {
  claims: ClaimRepo;
  clients: ClientRepo;
  deviceGrants: DeviceGrantRepo;
  devices: DeviceRepo;
  erasure: ErasureRepo;
  factors: FactorRepo;
  factorSummaries: FactorSummaryRepo;
  grants: GrantRepo;
  knownBrowsers: KnownBrowserRepo;
  links: LinkRepo;
  mailLimits: MailLimitRepo;
  passkeys: PasskeyRepo;
  presence: PresenceRepo;
  recoveryCodes: RecoveryCodeRepo;
  serials: SerialRepo;
  sessions: SessionRepo;
  shadowReports: ShadowRepo;
  signingKeys: SigningKeyRepo;
  throttle: ThrottleRepo;
  users: UserRepo;
  webhooks: WebhookRepo;
}

/** One part of what a service declares: for each repository it uses, the operations (methods) it calls of it. */
export type UsesPart = { readonly [R in keyof Repos]?: readonly (keyof Repos[R] & string)[] };

/**
 * What a service declares it uses: its own part, or a list of parts, such as its own and those of the
 * services it calls (a list, not a spread: a constant with a spread would stay in every bundle that
 * loads its module, used or not).
 */
export type UsesDeclaration = UsesPart | readonly (UsesPart | readonly UsesPart[])[];

type Flat<Part> = Part extends readonly (infer Inner)[] ? Inner : Part;
type PartsOf<U> = U extends readonly (infer Part)[] ? Flat<Part> : U;
type RepoNamesOf<Part> = Part extends unknown ? keyof Part : never;
type MethodsOf<Part, R extends PropertyKey> = Part extends { readonly [K in R]: readonly (infer Method)[] } ? Method : never;

/** The repositories a service that declares `U` is given, each narrowed to the operations `U` names. */
export type Uses<U extends UsesDeclaration> = {
  [R in RepoNamesOf<PartsOf<U>> & keyof Repos]: Pick<Repos[R], MethodsOf<PartsOf<U>, R> & keyof Repos[R]>;
};
