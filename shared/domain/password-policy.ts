/** Length over composition rules (NIST SP 800-63B): 10 to 128 characters, not a common password. */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128;

// The most common passwords of public breach corpora that meet the length rule, and their obvious kin.
const COMMON = new Set([
  '1234567890', '12345678910', '123456789a', '0123456789', '1111111111', '0000000000', 'qwertyuiop', 'qwerty1234',
  '1q2w3e4r5t', '1qaz2wsx3edc', 'password1', 'password12', 'password123', 'password1234', 'passw0rd123', 'iloveyou123',
  'abcdefghij', 'abcd123456', 'asdfghjkl1', 'zaq12wsxcde', 'qwerty123456', 'princess123', 'sunshine123', 'football123',
  'baseball123', 'welcome123', 'welcome1234', 'monkey12345', 'dragon12345', 'letmein123', 'trustno1234', 'superman123',
  'michael1234', 'charlie123', 'computer123', 'administrator', 'changeme123', 'qwertyuiop1', 'aaaaaaaaaa', 'password!',
  'passwordpassword', 'qazwsxedcrfv', '987654321', '9876543210', 'starwars123', 'whatever123', 'freedom1234',
]);

/** The reason a password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string, email = ''): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  const lower = password.toLowerCase();
  if (COMMON.has(lower) || /^(.)\1+$/iu.test(password)) return 'This password is too common. Choose another one.';
  const local = email.toLowerCase().split('@')[0] ?? '';
  if (local.length >= 3 && lower.includes(local)) return 'Do not use your e-mail address in your password.';
  return undefined;
}
