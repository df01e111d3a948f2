import { expiredLinkPage, newPasswordPage, outcomeOf, outcomePage } from '#shared/views/account-pages';
import { links, users } from '#shared/runtime';
import { pageContext } from '#shared/accounts/session';
import { pageHandler } from '#shared/http/page-handler';

/**
 * GET /password-reset/confirm?token=… — the new-password form, if the link is still good: GetItem
 * (link), then GetItem (user: a link of an earlier reset generation is dead, another link having
 * been used since). `?done=password-changed`: the outcome.
 */
export const handler = pageHandler(async (event) => {
  const { viewer } = await pageContext(event);
  const done = outcomeOf(event.queryStringParameters, 'password-changed');
  if (done) return outcomePage(viewer, done);
  const token = event.queryStringParameters?.token ?? '';
  const link = token ? await links.readLink('reset-password', token) : undefined;
  const record = link && (await users.getUserRecord(link.userId));
  if (!record || record.resetGeneration !== link.generation) return expiredLinkPage(viewer, 'reset-password');
  return newPasswordPage(viewer, token);
});
