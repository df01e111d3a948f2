import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary as commonDictionary } from '@zxcvbn-ts/language-common';
import { dictionary as englishDictionary, translations } from '@zxcvbn-ts/language-en';

// The password strength estimator: zxcvbn-ts with its common (breached passwords, diceware) and
// English (words, first and last names, Wikipedia, word sequences) dictionaries. Its dictionaries are
// about 1.6 MB of code, and building their ranked lists costs ~0.1–0.4 s of CPU: this module is
// never part of a function's bundle. password-policy.ts imports it on the first password it checks,
// from a file bundled on its own beside the function's (FunctionDef.lazyModules).

const estimator = new ZxcvbnFactory({
  translations,
  graphs: adjacencyGraphs,
  dictionary: { ...commonDictionary, ...englishDictionary },
});

export interface StrengthEstimate {
  /** zxcvbn's score: 0 (too guessable) to 4 (very unguessable). */
  score: number;
  /** zxcvbn's feedback, in English: why the password is weak (may be empty), and what to do. */
  warning: string;
  suggestions: string[];
}

/** Estimates a password's strength; `userInputs` are words of the account (address, names) an attacker would try first. */
export function estimateStrength(password: string, userInputs: readonly string[]): StrengthEstimate {
  const { score, feedback } = estimator.check(password, [...userInputs]);
  return { score, warning: feedback.warning ?? '', suggestions: feedback.suggestions };
}
