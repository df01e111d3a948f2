import { NotFoundError } from '#shared/errors';
import { publicHandler } from '#shared/http/http';
import { defaultAvatarPng } from '#shared/images/avatar';

/** `<user id>.png`, as a user's `avatar_url` names it. */
const AVATAR_FILE = /^([A-Za-z0-9_-]{1,64})\.png$/;

/**
 * GET /avatars/{file}: the image a user's `avatar_url` points to, on the resource API. Public (an
 * `<img>` sends no token) and computed from the id alone: the service stores no pictures, so every
 * id, known or not, gets its generated pattern and the answer says nothing about who has an account.
 */
export const handler = publicHandler(async (event) => {
  const match = AVATAR_FILE.exec(event.pathParameters?.file ?? '');
  if (!match) throw new NotFoundError('No avatar at this path: avatars are /avatars/<user id>.png.');
  return {
    statusCode: 200,
    headers: { 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' },
    body: defaultAvatarPng(match[1]!).toString('base64'),
    isBase64Encoded: true,
  };
});
