import { passwordProblem } from '#shared/domain/password-policy';
import { MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, normalizeEmail, normalizeName } from '#shared/domain/user';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Checks a sign-up form; returns the problems by field (empty when valid). The password's strength
 * is judged against the form's own address and names (password-policy.ts).
 */
export async function signupProblems(form: Record<string, string>): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  // Names are judged as they will be stored: a name of only invisible characters is no name.
  for (const [field, label] of [['firstname', 'first'], ['lastname', 'last']] as const) {
    const name = normalizeName(form[field] ?? '');
    if (!name || [...name].length > MAX_NAME_LENGTH) problems[field] = `Give your ${label} name (up to ${MAX_NAME_LENGTH} characters).`;
  }
  const email = normalizeEmail(form.email ?? '');
  if (!EMAIL.test(email) || email.length > MAX_EMAIL_LENGTH) problems.email = 'Give a valid e-mail address.';
  const password = await passwordProblem(form.password ?? '', { email, names: [form.firstname, form.lastname] });
  if (password) problems.password = password;
  if (form.gender !== undefined && !['0', '1', '2'].includes(form.gender)) problems.gender = 'Choose one of the options.';
  return problems;
}
