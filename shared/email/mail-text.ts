import { normalizeName } from '#shared/domain/user';

/** The most of a name a message repeats: a greeting needs no more. */
const MAX_MAIL_NAME_LENGTH = 40;

/**
 * A name as an e-mail's text may show it: whatever was stored (names from before sign-up
 * normalized them too), it can form no line break, link, address or domain that a mail client would
 * make clickable. Only letters, marks, digits, spaces, apostrophes, hyphens and periods are kept
 * (anything else becomes a space), a period is always followed by a space (`evil.example` becomes
 * `evil. example`), and it is cut at 40 characters. Names never go into a header or the subject;
 * should a message get an HTML part, this text is escaped there as any other.
 */
export function nameForMail(name: string): string {
  const kept = normalizeName(name)
    .replace(/[^\p{L}\p{M}\p{N} '’.-]/gu, ' ')
    .replace(/\.(?=\S)/g, '. ')
    .replace(/ +/g, ' ')
    .trim();
  return [...kept].slice(0, MAX_MAIL_NAME_LENGTH).join('').trim();
}

/** The first line of a message to someone: `Hello Ada,`, or `Hello,` when nothing of the name is left. */
export function greeting(firstname: string): string {
  const name = nameForMail(firstname);
  return name ? `Hello ${name},` : 'Hello,';
}
