import { BACKUP_RETENTION_DAYS } from '#shared/data/table-schema';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { Client } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { greeting } from '#shared/email/mail-text';
import type { Mailer } from '#shared/email/mailer';
import { ConflictError, NotFoundError } from '#shared/errors';
import { DELETE_APPLICATION_USES, deleteApplication } from '#shared/oauth/app-access';

/**
 * The steps of an account's deletion, in their order. The first writes the deletion marker on the
 * profile (from then on the account cannot sign in, and its sessions no longer open a page); each
 * later one is idempotent, so a deletion that stopped anywhere is finished by running it again
 * (deleteAccount on the same user: the account's next deletion request, or
 * `npm run admin -- delete-user`). The profile, holding the marker, goes last.
 * - `grants`: every application's grant ends (its consent gets the reason `account_deleted`, its
 *   token families are deleted, then the consent is removed: the application's `grant.revoked`);
 * - `applications`: the applications the user develops, with their webhook and deliveries (deletion
 *   is refused beforehand while other people use one, see applicationsInUse);
 * - `devices` (with the second factors and the second-factor throttle record), `address` (the e-mail address is free for a new sign-up), `mail` (the farewell
 *   e-mail, once), `sessions`, `profile`.
 */
export const DELETION_STEPS = ['mark', 'grants', 'applications', 'devices', 'address', 'mail', 'sessions', 'profile'] as const;
export type DeletionStep = (typeof DELETION_STEPS)[number];

/** The repository operations applicationsInUse uses (its functions' grants: functions/needs.ts). */
export const APPLICATIONS_IN_USE_USES = { clients: ['listClientsByDeveloper'], grants: ['grantsOf'] } as const satisfies UsesDeclaration;

/** The repository operations deleteAccount uses, applicationsInUse's and deleteApplication's among them. */
export const DELETE_ACCOUNT_USES = [APPLICATIONS_IN_USE_USES, DELETE_APPLICATION_USES, {
  erasure: [
    'getSubject', 'markDeleting', 'markConsentEnding', 'grantsOfUser', 'deleteItems', 'webhookKeyOf', 'deliveryKeysOf', 'deviceKeysOf', 'factorKeysOf',
    'throttleKeysOf', 'releaseAddress', 'recordFarewellMailed', 'deleteProfile',
  ],
  grants: ['listConsentsByUser', 'deleteConsent'],
  sessions: ['sessionKeysOf'],
}] as const satisfies UsesDeclaration;

/** What an account's deletion works with (shared/runtime.ts binds it). */
export type DeletionDeps = Uses<typeof DELETE_ACCOUNT_USES> & {
  mailer: Mailer;
  /** The authorization server's URL, for the farewell e-mail. */
  issuer: string;
  /** Runs after each step completes: where progress can be observed (the tests stop a deletion there). */
  afterStep?: (step: DeletionStep) => void | Promise<void>;
  now?: () => Date;
};

/** An application the user develops that someone else still uses: the account cannot be deleted before it. */
export interface ApplicationInUse {
  client: Client;
  /** How many other people have authorized it. */
  users: number;
}

/** Deletion refused: the user develops applications other people use (they must be deleted first, deliberately). */
export class ApplicationsInUseError extends ConflictError {
  constructor(readonly applications: readonly ApplicationInUse[]) {
    super(`Delete these applications in the developer console first: ${applications.map((a) => a.client.name).join(', ')}.`);
  }
}

/**
 * The applications the user develops that other people have authorized (another user's consent
 * stands: a token family without its consent is refused at its next refresh): one Query on GSI1 for
 * the list, one per application.
 */
export async function applicationsInUse(deps: Uses<typeof APPLICATIONS_IN_USE_USES>, userId: string): Promise<ApplicationInUse[]> {
  const apps = await deps.clients.listClientsByDeveloper(userId);
  const inUse = await Promise.all(apps.map(async (client) => {
    const { consentUserIds } = await deps.grants.grantsOf(client.clientId);
    return { client, users: new Set(consentUserIds.filter((id) => id !== userId)).size };
  }));
  return inUse.filter((app) => app.users > 0);
}

/**
 * Deletes the account and every item of it that the service can find, in the order of
 * DELETION_STEPS, resuming a deletion that stopped half-way. Returns 'absent' when there is no such
 * account (deleted already), else 'deleted'. Throws ApplicationsInUseError, having changed nothing,
 * when a deletion not yet started finds applications of the user that others use; a deletion that
 * has started is always finished (an application someone authorized since is deleted, its users'
 * grants ended). The caller confirmed the request: the owner's password (confirmIdentity), or an operator.
 */
export async function deleteAccount(deps: DeletionDeps, userId: string): Promise<'deleted' | 'absent'> {
  const { erasure, grants, clients, sessions, mailer, issuer, afterStep = () => undefined, now = () => new Date() } = deps;
  let subject = await erasure.getSubject(userId);
  if (!subject) return 'absent';
  const done = async (step: DeletionStep) => afterStep(step);

  if (!subject.deletion) {
    const inUse = await applicationsInUse(deps, userId);
    if (inUse.length > 0) throw new ApplicationsInUseError(inUse);
    const since = formatTimestamp(now());
    // Not marked by this call: a concurrent one marked it first; go on from what it wrote.
    subject = (await erasure.markDeleting(userId, since)) ? { ...subject, deletion: { since } } : await erasure.getSubject(userId);
    if (!subject?.deletion) return 'absent';
  }
  const { user, deletion } = subject;
  await done('mark');

  // Every grant ends first: per application, the consent gets the reason, the token families go
  // (no refresh token works from here), then the consent goes, which tells the application. The
  // consent is the last of them, so a retry still finds the application to finish.
  for (const { clientId } of await grants.listConsentsByUser(userId)) {
    await erasure.markConsentEnding(userId, clientId, 'account_deleted');
    await erasure.deleteItems((await erasure.grantsOfUser(clientId, userId)).map((grant) => grant.key));
    await grants.deleteConsent(userId, clientId);
  }
  await done('grants');

  for (const app of await clients.listClientsByDeveloper(userId)) {
    // Its webhook, then its deliveries, while the application is still listed for a retry to find:
    // a fan-out writes a delivery only while the webhook exists (or, for a device event, the consent,
    // which the grants step removed), so none can appear once they are gone.
    await erasure.deleteItems([erasure.webhookKeyOf(app.clientId)]);
    await erasure.deleteItems(await erasure.deliveryKeysOf(app.clientId));
    try {
      await deleteApplication(deps, userId, app.clientId);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  await done('applications');

  await erasure.deleteItems(await erasure.deviceKeysOf(userId));
  // The second factors with the devices, the passkeys' claims and the second-factor throttle record,
  // which are outside the user's partition.
  await erasure.deleteItems([...await erasure.factorKeysOf(userId), ...erasure.throttleKeysOf(userId)]);
  await done('devices');

  await erasure.releaseAddress(user.email, userId);
  await done('address');

  if (!deletion.mailedAt) {
    await mailer.send(farewell(user.firstname, user.email, issuer));
    await erasure.recordFarewellMailed(userId, formatTimestamp(now()));
  }
  await done('mail');

  await erasure.deleteItems(await sessions.sessionKeysOf(userId));
  await done('sessions');

  await erasure.deleteProfile(userId);
  await done('profile');
  return 'deleted';
}

/** The farewell e-mail: what happened, and what stays (the backups' window). */
function farewell(firstname: string, to: string, issuer: string) {
  return {
    to,
    subject: 'Your account has been deleted',
    text: `${greeting(firstname)}\n\nYour account at ${issuer} has been deleted, as you asked: your profile, devices, sessions and applications are gone, and every application you had authorized has lost its access.\n\nThe service's backups keep a copy of its data for ${BACKUP_RETENTION_DAYS} days, after which nothing of your account remains.\nYou may sign up again with this address at any time.\n`,
  };
}
