import { normalizeEmail } from '#shared/domain/user';

// Key builders and parsers: the only place that knows how items are laid out (no other module
// writes or reads a key's text: test/unit/layout.test.ts holds it). Ownership is part of the
// device key, so "my device" is one GetItem/UpdateItem and another user's device does not exist.

const USER_PK_PREFIX = 'USER#';
export const userKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: 'PROFILE' });

const DEVICE_SK_PREFIX = 'DEVICE#';
export const devicesOfUserKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, skPrefix: DEVICE_SK_PREFIX });
export const deviceKey = (userId: string, deviceId: string) => ({
  pk: `${USER_PK_PREFIX}${userId}`,
  sk: `${DEVICE_SK_PREFIX}${deviceId}`,
});
/**
 * What an application sees of a user's devices, in one Query of the user's partition: the range from
 * the user's consent to the application (`CONSENT#<clientId>`, which sorts before every `DEVICE#`)
 * through the last device (the other applications' consents that sort after it are read too, and
 * dropped by the caller: a Query cannot filter on the key).
 */
export const devicesSeenByClientRange = (userId: string, clientId: string) => ({
  pk: `${USER_PK_PREFIX}${userId}`, from: `${CONSENT_SK_PREFIX}${clientId}`, to: `${DEVICE_SK_PREFIX}\uffff`, devicePrefix: DEVICE_SK_PREFIX,
});
/**
 * A device that belongs to nobody (provisioned, or removed from its owner's account): its fields, its
 * certificate's id and the hash of its live claim code, until an owner claims it into their partition.
 */
export const unclaimedDeviceKey = (deviceId: string) => ({ pk: `UNCLAIMED#${deviceId}`, sk: 'DEVICE' });
/** A claim code, by the hash of its canonical form: names the unclaimed device it adds, single use. */
export const claimCodeKey = (codeHash: string) => ({ pk: `CLAIMCODE#${codeHash}`, sk: 'CLAIMCODE' });
/** The count of claim codes entered by one account, or from one address, in one window (as userCodeEntriesKey). */
export const claimEntriesKey = (scope: 'account' | 'address', subject: string, windowStart: number) => ({
  pk: `CLAIMENTRIES#${scope}#${subject}`, sk: `WINDOW#${windowStart}`,
});
/** A serial number the factory may provision by claim (fleet provisioning's allow-list), naming its device. */
export const factorySerialKey = (serial: string) => ({ pk: `SERIAL#${serial}`, sk: 'SERIAL' });
/** GSI1 entry that finds a device by id alone (operators: provisioning, connectivity). */
export const deviceByIdIndexKey = (deviceId: string) => ({ gsi1pk: `DEVICE#${deviceId}`, gsi1sk: 'DEVICE' });

export const emailKey = (email: string) => ({ pk: `EMAIL#${normalizeEmail(email)}`, sk: 'EMAIL' });

// Authorization server items. Secrets (session ids) appear in keys only as hashes; codes and refresh
// tokens appear nowhere as keys: they name their family, and their hashes are attributes of it.
const CLIENT_PK_PREFIX = 'CLIENT#';
export const clientKey = (clientId: string) => ({ pk: `${CLIENT_PK_PREFIX}${clientId}`, sk: 'CLIENT' });
export const clientsOfDeveloperIndexKey = (developerId: string, createdAt: string) => ({
  gsi1pk: clientsOfDeveloperPartition(developerId),
  gsi1sk: `CLIENT#${createdAt}`,
});
/** The index partition that lists a developer's clients (Query). */
export const clientsOfDeveloperPartition = (developerId: string) => `DEVELOPER#${developerId}`;
/** A new client secret waiting to be shown once, by the hash of the key its browser holds (see client-repo.ts). */
export const secretRevealKey = (keyHash: string) => ({ pk: `REVEAL#${keyHash}`, sk: 'REVEAL' });
export const sessionKey = (sessionHash: string) => ({ pk: `SESSION#${sessionHash}`, sk: 'SESSION' });
/** GSI1 entry listing a user's sessions, so a password reset can end them all. */
export const sessionsOfUserIndexKey = (userId: string, sessionHash: string) => ({ gsi1pk: sessionsOfUserPartition(userId), gsi1sk: sessionHash });
/** The index partition that lists a user's sessions (Query). */
export const sessionsOfUserPartition = (userId: string) => `SESSIONS#${userId}`;
const CONSENT_SK_PREFIX = 'CONSENT#';
export const consentKey = (userId: string, clientId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: `${CONSENT_SK_PREFIX}${clientId}` });
/** The applications a user has authorized: the consents in the user's partition. */
export const consentsOfUserKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, skPrefix: CONSENT_SK_PREFIX });
const FAMILY_PK_PREFIX = 'FAMILY#';
export const familyKey = (familyId: string) => ({ pk: `${FAMILY_PK_PREFIX}${familyId}`, sk: 'FAMILY' });
/** GSI1 entry of a refresh-token family (or code, its first state): all families of a client, or of one user of it (prefix). */
export const familiesOfClientIndexKey = (clientId: string, userId: string, familyId: string) => ({
  gsi1pk: `FAMILIES#${clientId}`,
  gsi1sk: `USER#${userId}#${familyId}`,
});
/**
 * GSI1 entry of a device authorization not yet approved (RFC 8628): it has no user yet, but is an
 * application's grant all the same, so the Query that revokes an application's grants when it is
 * deleted finds it. The approval moves it to familiesOfClientIndexKey, under its user.
 */
export const pendingDeviceIndexKey = (clientId: string, familyId: string) => ({
  gsi1pk: `FAMILIES#${clientId}`,
  gsi1sk: `DEVICE#${familyId}`,
});
/** A user code of the device flow, by the hash of its canonical form, until it is entered or expires. */
export const userCodeKey = (codeHash: string) => ({ pk: `USERCODE#${codeHash}`, sk: 'USERCODE' });
/**
 * The count of user codes entered by one account, or from one address, in one window named by its
 * start (epoch seconds): a new window is a new item, as for mailLimitKey.
 */
export const userCodeEntriesKey = (scope: 'account' | 'address', subject: string, windowStart: number) => ({
  pk: `USERCODEENTRIES#${scope}#${subject}`, sk: `WINDOW#${windowStart}`,
});
/**
 * GSI1 entry of a consent: in its application's partition of the families index, so the one Query
 * that finds an application's families when it is deleted finds its consents too (a user's
 * partition is out of reach of the application's deletion otherwise).
 */
export const consentOfClientIndexKey = (clientId: string, userId: string) => ({
  gsi1pk: `FAMILIES#${clientId}`,
  gsi1sk: `USER#${userId}#CONSENT`,
});
/**
 * The GSI1 partition of an application's families and consents (see the two entries above), and,
 * for one user of it, the prefix of that user's entries.
 */
export const grantsOfClientIndexKey = (clientId: string, userId?: string) => ({
  gsi1pk: `FAMILIES#${clientId}`,
  ...(userId ? { gsi1skPrefix: `USER#${userId}#` } : {}),
});

/**
 * GSI1 entry of a user's profile while the account is being deleted (its deletion marker, see
 * erasure-repo.ts): every unfinished deletion is found with one Query of this partition.
 */
export const pendingDeletionIndexKey = (since: string, userId: string) => ({ gsi1pk: PENDING_DELETIONS_PARTITION, gsi1sk: `${since}#${userId}` });
/** The index partition that lists the accounts being deleted (Query). */
export const PENDING_DELETIONS_PARTITION = 'DELETIONS';

const KEY_ATTRIBUTES = new Set(['pk', 'sk', 'gsi1pk', 'gsi1sk']);

/** An item without its key attributes. */
export function fromItem<T>(item: Record<string, unknown>): T {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !KEY_ATTRIBUTES.has(name))) as T;
}
export const throttleKey = (kind: 'account-address' | 'account' | 'address' | 'second-factor', subject: string) => ({ pk: `THROTTLE#${kind}#${subject}`, sk: 'THROTTLE' });
export const linkKey = (tokenHash: string) => ({ pk: `LINK#${tokenHash}`, sk: 'LINK' });

/** The one item listing the access-token signing keys and their schedule (see signing-key-repo.ts). */
export const signingKeysKey = () => ({ pk: 'SIGNING#KEYS', sk: 'SIGNING#KEYS' });
/**
 * The count of account e-mails sent to one address (by the hash of its normalized form) in one
 * window, named by the window's start (epoch seconds): a new window is a new item (see mail-limit-repo.ts).
 */
export const mailLimitKey = (addressHash: string, windowStart: number) => ({ pk: `MAILLIMIT#${addressHash}`, sk: `WINDOW#${windowStart}` });
/** A browser that signed in to an account before (OWASP's "device cookie"), by the hash of its cookie value. */
export const knownBrowserKey = (tokenHash: string) => ({ pk: `BROWSER#${tokenHash}`, sk: 'BROWSER' });

/**
 * A user's second factors, in the user's partition beside the profile: the authenticator app's
 * secret (with the last time step used), an enrolment waiting for its first code, the hashes of
 * the recovery codes, and the recovery codes waiting to be shown once (sealed).
 */
const FACTOR_SK_PREFIX = 'FACTOR#';
export const totpKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: `${FACTOR_SK_PREFIX}TOTP` });
export const totpEnrolmentKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: `${FACTOR_SK_PREFIX}TOTP#ENROLMENT` });
export const recoveryCodesKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: `${FACTOR_SK_PREFIX}RECOVERY` });
export const recoveryRevealKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: `${FACTOR_SK_PREFIX}RECOVERY#REVEAL` });
/**
 * A passkey (WebAuthn credential) of a user, by the hash of its credential id (ids run to 1,023
 * bytes, longer than a sort key may be); all of a user's passkeys share the prefix.
 */
export const passkeyKey = (userId: string, credentialIdHash: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, sk: `${FACTOR_SK_PREFIX}PASSKEY#${credentialIdHash}` });
export const passkeysOfUserKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, skPrefix: `${FACTOR_SK_PREFIX}PASSKEY#` });
/** Every second factor of a user (authenticator app, recovery codes, passkeys): the prefix they share. */
export const factorsOfUserKey = (userId: string) => ({ pk: `${USER_PK_PREFIX}${userId}`, skPrefix: FACTOR_SK_PREFIX });
/** The hash of the credential id a passkey's key names; undefined for another factor's. */
export const passkeyHashOfKey = (key: { sk: string }): string | undefined =>
  (key.sk.startsWith(`${FACTOR_SK_PREFIX}PASSKEY#`) ? key.sk.slice(`${FACTOR_SK_PREFIX}PASSKEY#`.length) : undefined);
/** The claim of a credential id by one account (a credential is registered to one account only). */
export const passkeyClaimKey = (credentialIdHash: string) => ({ pk: `PASSKEYID#${credentialIdHash}`, sk: 'PASSKEYID' });
/** A WebAuthn challenge waiting for its answer, single use, by its hash. */
export const challengeKey = (challengeHash: string) => ({ pk: `CHALLENGE#${challengeHash}`, sk: 'CHALLENGE' });
/** A sign-in whose password was right, waiting for its second factor, by the hash of its cookie value. */
export const pendingSignInKey = (tokenHash: string) => ({ pk: `SIGNIN#${tokenHash}`, sk: 'SIGNIN' });

/** An application's webhook subscription (URL, signing secrets), next to the application's own item. */
export const webhookKey = (clientId: string) => ({ pk: `${CLIENT_PK_PREFIX}${clientId}`, sk: 'WEBHOOK' });
/** One webhook delivery of an application, newest last in its partition: `<ISO time>#<webhook id>`. */
export const deliveriesOfClientKey = (clientId: string) => ({ pk: `DELIVERIES#${clientId}` });
export const deliveryKey = (clientId: string, createdAt: string, webhookId: string) => ({
  pk: `DELIVERIES#${clientId}`,
  sk: `${createdAt}#${webhookId}`,
});

// Parsers: what an item's key says, for the code that gets items without asking for them by key
// (a Query of the index, the table's stream).

/** Whether a key is a token family's (or a code's, its first state). */
export const isFamilyKey = (key: { pk?: unknown }) => String(key.pk).startsWith(FAMILY_PK_PREFIX);
/** Whether a key is a consent's. */
export const isConsentKey = (key: { sk?: unknown }) => String(key.sk).startsWith(CONSENT_SK_PREFIX);

/** The owner and the id of a device's key; undefined for another item's. */
export function parseDeviceKey(key: { pk: string; sk: string }): { userId: string; deviceId: string } | undefined {
  if (!key.pk.startsWith(USER_PK_PREFIX) || !key.sk.startsWith(DEVICE_SK_PREFIX)) return undefined;
  return { userId: key.pk.slice(USER_PK_PREFIX.length), deviceId: key.sk.slice(DEVICE_SK_PREFIX.length) };
}

/** The user and the application of a consent's key; undefined for another item's. */
export function parseConsentKey(key: { pk: string; sk: string }): { userId: string; clientId: string } | undefined {
  if (!key.pk.startsWith(USER_PK_PREFIX) || !key.sk.startsWith(CONSENT_SK_PREFIX)) return undefined;
  return { userId: key.pk.slice(USER_PK_PREFIX.length), clientId: key.sk.slice(CONSENT_SK_PREFIX.length) };
}

/** The application of a webhook subscription's key (see webhookKey). */
export const clientIdOfWebhookKey = (key: { pk: string }) => key.pk.slice(CLIENT_PK_PREFIX.length);

/**
 * The key prefixes of the items whose changes make webhook events (devices, consents, token
 * families): shared/webhooks/events.ts tells them apart with the parsers above, and the fan-out's
 * stream filters (shared/webhooks/stream-filter.ts) match these prefixes.
 */
export const DEVICE_KEY_PREFIXES = { pk: USER_PK_PREFIX, sk: DEVICE_SK_PREFIX } as const;
export const CONSENT_KEY_PREFIXES = { pk: USER_PK_PREFIX, sk: CONSENT_SK_PREFIX } as const;
export const FAMILY_KEY_PREFIXES = { pk: FAMILY_PK_PREFIX } as const;

/**
 * The benchmark's stand-in items (bench/floors.ts) live under this prefix, which no item of the
 * service uses: a floor's requests neither read nor disturb the service's items.
 */
export const BENCH_FLOOR_PREFIX = 'BENCH#floor#';
