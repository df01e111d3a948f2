import { afterAll, beforeAll } from 'vitest';

type Write = typeof process.stdout.write;

/**
 * Keeps, and does not print, everything the process writes to `streams` from the file's
 * `beforeAll` to its `afterAll`, then restores them. Call it before `useTestService()`, so the
 * service starts once output is kept and stops before it is printed again. Returns the chunks.
 */
export function captureOutput(streams: readonly ('stdout' | 'stderr')[]): string[] {
  const captured: string[] = [];
  const originals = { stdout: process.stdout.write, stderr: process.stderr.write };
  beforeAll(() => {
    for (const stream of streams) {
      process[stream].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
        done?.();
        return true;
      }) as Write;
    }
  });
  afterAll(() => {
    for (const stream of streams) process[stream].write = originals[stream];
  });
  return captured;
}
