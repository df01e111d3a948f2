import { passwordProblem } from '#shared/domain/password-policy';
import { MAX_EMAIL_LENGTH, normalizeEmail } from '#shared/domain/user';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Checks a sign-up form; returns the problems by field (empty when valid). The password's strength
 * is judged against the form's own address and names (password-policy.ts).
 */
export async function signupProblems(form: Record<string, string>): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  if (!form.firstname?.trim() || form.firstname.length > 100) problems.firstname = 'Give your first name (up to 100 characters).';
  if (!form.lastname?.trim() || form.lastname.length > 100) problems.lastname = 'Give your last name (up to 100 characters).';
  const email = normalizeEmail(form.email ?? '');
  if (!EMAIL.test(email) || email.length > MAX_EMAIL_LENGTH) problems.email = 'Give a valid e-mail address.';
  const password = await passwordProblem(form.password ?? '', { email, names: [form.firstname, form.lastname] });
  if (password) problems.password = password;
  if (form.gender !== undefined && !['0', '1', '2'].includes(form.gender)) problems.gender = 'Choose one of the options.';
  return problems;
}
