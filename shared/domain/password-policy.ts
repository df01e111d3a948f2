import type { StrengthEstimate } from './password-strength.ts';

/**
 * Length over composition rules (NIST SP 800-63B): 10 to 128 characters; and hard to guess: a
 * zxcvbn score of at least 3 against its common and English dictionaries and the account's own
 * words (address, names), the estimator of shared/domain/password-strength.ts.
 */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128;
/**
 * zxcvbn's 3: "safely unguessable", about 10^8 guesses or more, which the scrypt hash turns into
 * years of an offline attack per account; 2 (10^6) falls to a few days of it.
 */
export const PASSWORD_MIN_SCORE = 3;

/** The start of the problem of a password the estimator scores too low; zxcvbn's feedback follows. */
export const TOO_EASY = 'This password is too easy to guess.';

/** The estimator's module, bundled on its own beside the functions that check passwords (FunctionDef.lazyModules). */
export const PASSWORD_STRENGTH_ENTRY = 'shared/domain/password-strength.ts';

/** What an attacker knows of the account: words the password must not lean on. */
export interface PasswordContext {
  email?: string;
  names?: readonly (string | undefined)[];
}

type Estimator = (password: string, userInputs: readonly string[]) => StrengthEstimate;

// Run from source (tests, local service) this file is a .ts and the estimator is its neighbour;
// bundled, the estimator is password-strength.mjs beside the bundle. The specifier is computed, so
// esbuild leaves the import to run time instead of putting the dictionaries into the bundle.
const ESTIMATOR_URL = new URL(import.meta.url.endsWith('.ts') ? './password-strength.ts' : './password-strength.mjs', import.meta.url).href;
let estimator: Promise<Estimator> | undefined;

/** Loads the estimator and its dictionaries on first use, once per process (again after a failed load). */
function loadEstimator(): Promise<Estimator> {
  estimator ??= (import(ESTIMATOR_URL) as Promise<{ estimateStrength: Estimator }>).then(
    (module) => module.estimateStrength,
    (error: unknown) => {
      estimator = undefined;
      throw error;
    },
  );
  return estimator;
}

/** The words of the account that zxcvbn treats as known to an attacker. */
function userInputs({ email = '', names = [] }: PasswordContext): string[] {
  const local = email.toLowerCase().split('@')[0] ?? '';
  const words = [email, local, ...local.split(/[^\p{L}\p{N}]+/u), ...names.flatMap((name) => (name ?? '').split(/\s+/))];
  return [...new Set(words.map((word) => word.trim().toLowerCase()).filter((word) => word.length >= 2))];
}

/** The reason a password is refused, or undefined when it is acceptable. */
export async function passwordProblem(password: string, context: PasswordContext = {}): Promise<string | undefined> {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  const local = context.email?.toLowerCase().split('@')[0] ?? '';
  if (local.length >= 3 && password.toLowerCase().includes(local)) return 'Do not use your e-mail address in your password.';
  const estimate = (await loadEstimator())(password, userInputs(context));
  if (estimate.score >= PASSWORD_MIN_SCORE) return undefined;
  const advice = [estimate.warning, ...estimate.suggestions].filter(Boolean).join(' ');
  return `${TOO_EASY} ${advice || 'Add more words that are less common.'}`;
}
