import { exportAccount } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { ConflictError } from '#shared/errors';
import { API_SECURITY_HEADERS } from '#shared/http/security-headers';
import type { HttpResult } from '#shared/http/responses';

/**
 * POST /account/export — "Download my data": everything the service stores about the signed-in
 * user, as one JSON file (exportAccount; its shape is docs/export.schema.json), downloaded as an
 * attachment. Only the session's own user: the form names the account it was shown for, and one
 * sent under another sign-in is refused. A form (POST, CSRF) rather than a link, so that no other
 * site can start it. Requests: see exportAccount, after one BatchGetItem (session, user).
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account' }, async ({ form, signedIn }) => {
  if (form.account !== signedIn.user.id) {
    throw new ConflictError('This form was opened for another account: you signed in as someone else since. Open your account page again.');
  }
  const document = await exportAccount(signedIn.user, signedIn.sessionId);
  const result: HttpResult = {
    statusCode: 200,
    headers: {
      ...API_SECURITY_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="account-export-${document.exported_at.slice(0, 10)}.json"`,
    },
    body: `${JSON.stringify(document, null, 2)}\n`,
  };
  return result;
});
