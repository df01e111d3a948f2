import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { WebhookSubscription } from '#shared/data/webhook-repo';
import { createMailer, type MailSettings } from '#shared/email/create-mailer';

/** The repository operations sendDisabledNotice uses (the delivery function's grants: functions/needs.ts). */
export const DISABLED_NOTICE_USES = { clients: ['getClient'], users: ['getUserById'] } as const satisfies UsesDeclaration;

export type DisabledNoticeDeps = Uses<typeof DISABLED_NOTICE_USES> & {
  /** The authorization server's URL, where the developer console is. */
  issuer: string;
  /** Where the message goes; its mailer (and SES client) is made here, in this module's own bundle. */
  mail: MailSettings;
};

/**
 * E-mails the developer of an application whose webhook was disabled (GetItem application, GetItem
 * user, one message). Bundled on its own beside the delivery function (FunctionDef.lazyModules) and
 * loaded on first use (shared/runtime.ts notifyDisabled): the SES client is needed only on this rare
 * path, not at every cold start.
 */
export async function sendDisabledNotice(subscription: WebhookSubscription, { clients, users, issuer, mail }: DisabledNoticeDeps): Promise<void> {
  const client = await clients.getClient(subscription.clientId);
  const developer = client && (await users.getUserById(client.developerId));
  if (!client || !developer) return;
  await createMailer(mail).send({
    to: developer.email,
    subject: `Webhook of ${client.name} disabled`,
    text: `Hello ${developer.firstname},\n\nThe webhook of your application "${client.name}" (${subscription.url}) has failed every delivery since ${subscription.failingSince ?? 'several days'}, so we stopped sending events to it.\nFix the receiver, then save its URL again in the developer console (${issuer}/developer/apps/${client.clientId}) to turn it back on. Events sent in between are not delivered again.\n`,
  });
}
