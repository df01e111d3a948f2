import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

export interface ToolRun {
  /** Exit status; null when the process ended on a signal (the timeout kills it). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a TypeScript entry point of the repository (`local/token.ts`, …) in a child process through
 * tsx, as `npm run` does, with `env` added to this process's environment. The child is killed at
 * the timeout, so a test never leaves it running.
 */
export function runTool(script: string, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ToolRun> {
  const tsx = resolve('node_modules/tsx/dist/cli.mjs');
  return new Promise((done) => {
    execFile(process.execPath, [tsx, resolve(script), ...args], { env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }));
  });
}
