import type { BatchReader } from '#shared/data/batch-read';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { subscriptionRead } from '#shared/data/webhook-repo';
import { clientTypeOf } from '#shared/domain/client';
import type { Device } from '#shared/domain/device';
import type { User } from '#shared/domain/user';

/** What an export document says it is (`format`), and the version of its shape (docs/export.schema.json). */
export const EXPORT_FORMAT = 'device-user-service/account-export';
export const EXPORT_VERSION = 1;

/** A time as the export writes it: ISO 8601 in UTC, with its `Z`. */
const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/**
 * Everything the service stores about one user, as one JSON document (GDPR articles 15 and 20),
 * described by docs/export.schema.json. No secret is in it: no password hash, no client or webhook
 * secret, no token or its hash, no session id.
 */
export interface AccountExport {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  exported_at: string;
  profile: User;
  devices: Device[];
  authorizations: {
    client_id: string;
    application_name: string | null;
    scopes: string[];
    /** The devices the application sees: every one (now and later), only some, or all but some (and those added later). */
    devices: 'all' | { only: string[] } | { all_but: string[] };
    granted_at: string;
    grants: { status: 'pending' | 'active' | 'revoked'; scopes: string[]; created_at: string | null; last_refreshed_at: string | null; expires_at: string | null }[];
  }[];
  sessions: { created_at: string; expires_at: string; current: boolean; browser: string; address: string | null }[];
  /** What signs the user in besides the password: never a secret, public key, code (or its hash) or credential id. */
  second_factors: {
    authenticator_app: { enrolled_at: string } | null;
    recovery_codes_left: number;
    passkeys: { name: string; created_at: string; last_used_at: string | null; backed_up: boolean }[];
  };
  applications: {
    client_id: string;
    name: string;
    description: string;
    website: string;
    redirect_uris: string[];
    client_type: 'confidential' | 'public';
    developer_name: string;
    created_at: string;
    secret_created_at: string | null;
    webhook: { url: string; created_at: string; updated_at: string; failing_since: string | null; disabled_at: string | null } | null;
  }[];
  email: {
    address: string;
    confirmed: boolean;
    /** Account e-mails counted to the address in the current hour (the sending limit's count, the only trace of e-mail kept). */
    sent_this_hour: number;
    /** Always false: the service keeps no copy of the e-mail it sends. */
    copies_kept: false;
  };
}

/** What the export reads with. */
export interface ExportDeps extends Uses<typeof EXPORT_USES> {
  batch: BatchReader;
}

/**
 * The repository operations exportAccount uses (its functions' grants: functions/needs.ts); besides them it
 * reads the developed applications' webhooks by the webhook repository's `subscriptionRead`, without the repository.
 */
export const EXPORT_USES = {
  devices: ['listDevicesByOwner'], grants: ['listConsentsByUser'], clients: ['clientsRead', 'listClientsByDeveloper'], erasure: ['grantsOfUser'],
  factorSummaries: ['factorsOf'], sessions: ['listSessions'], mailLimits: ['sentThisWindow'],
} as const satisfies UsesDeclaration;

/**
 * The export of `user`, the signed-in user (`currentSessionId`: the asking session, marked
 * `current`). Requests: Query (devices), Query (consents), Query (second factors), Query on GSI1
 * (sessions), Query on GSI1 (applications developed) and GetItem (this hour's mail count) at once,
 * then Query on GSI1 per authorized application (its token families), then one BatchGetItem (the
 * authorized applications' names and the developed applications' webhooks) when there is any.
 */
export async function exportAccount(deps: ExportDeps, user: User, currentSessionId: string | undefined, now = new Date()): Promise<AccountExport> {
  const { batch, devices, grants, clients, erasure, factorSummaries, sessions: sessionRepo, mailLimits } = deps;
  const [owned, consents, factors, sessions, developed, sent] = await Promise.all([
    devices.listDevicesByOwner(user.id),
    grants.listConsentsByUser(user.id),
    factorSummaries.factorsOf(user.id),
    sessionRepo.listSessions(user.id, currentSessionId, now),
    clients.listClientsByDeveloper(user.id),
    mailLimits.sentThisWindow(user.email, now),
  ]);
  const families = await Promise.all(consents.map((consent) => erasure.grantsOfUser(consent.clientId, user.id)));
  const [names, ...webhooks] = await batch.read([
    clients.clientsRead(consents.map((consent) => consent.clientId)),
    ...developed.map((client) => subscriptionRead(client.clientId)),
  ]);
  const stamp = (value: number | undefined) => (value === undefined ? null : iso(value));

  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: now.toISOString(),
    profile: user,
    devices: owned,
    authorizations: consents.map((consent, i) => ({
      client_id: consent.clientId,
      application_name: (names as ({ name: string } | undefined)[])[i]?.name ?? null,
      scopes: consent.scopes,
      devices: consent.onlyDevices ? { only: consent.onlyDevices } : consent.exceptDevices ? { all_but: consent.exceptDevices } : 'all' as const,
      granted_at: consent.grantedAt,
      grants: (families[i] ?? []).map((family) => ({
        // A device authorization the user approved, not yet redeemed by its device, is pending as a code is.
        status: String(family.status).startsWith('device_') ? 'pending' as const : family.status,
        scopes: family.scopes,
        created_at: family.createdAt ?? null,
        last_refreshed_at: family.rotatedAt === undefined ? null : new Date(family.rotatedAt).toISOString(),
        expires_at: stamp(family.expiresAt),
      })),
    })),
    // The session's start is its end less the fixed session lifetime. Sessions record no "last seen".
    sessions: sessions.map((session) => ({
      created_at: iso(session.expiresAt - SESSION_TTL_SECONDS), expires_at: iso(session.expiresAt), current: session.current,
      browser: session.browser, address: session.address ?? null,
    })),
    second_factors: {
      authenticator_app: factors.authenticatorApp ? { enrolled_at: factors.authenticatorApp.enrolledAt } : null,
      recovery_codes_left: factors.recoveryCodesLeft,
      passkeys: factors.passkeys.map((passkey) => ({
        name: passkey.name, created_at: passkey.createdAt, last_used_at: passkey.lastUsedAt ?? null, backed_up: passkey.backedUp,
      })),
    },
    applications: developed.map((client, i) => {
      const webhook = webhooks[i] as { url: string; createdAt: string; updatedAt: string; failingSince?: string; disabledAt?: string } | undefined;
      return {
        client_id: client.clientId,
        name: client.name,
        description: client.description,
        website: client.website,
        redirect_uris: client.redirectUris,
        client_type: clientTypeOf(client),
        developer_name: client.developerName,
        created_at: client.createdAt,
        secret_created_at: client.secretHash === undefined ? null : client.secretCreatedAt ?? client.createdAt,
        webhook: webhook
          ? { url: webhook.url, created_at: webhook.createdAt, updated_at: webhook.updatedAt, failing_since: webhook.failingSince ?? null, disabled_at: webhook.disabledAt ?? null }
          : null,
      };
    }),
    email: { address: user.email, confirmed: user.email_confirmed, sent_this_hour: sent, copies_kept: false },
  };
}
