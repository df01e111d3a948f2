import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestProject } from 'vitest/node';

/** Caches that tools keep in the temporary folder on purpose (tsx's compile cache, of the tools tests run); they go with the folder. */
const TOOL_CACHES = /^tsx-\d+$/;

/**
 * The run's temporary folder (the root project's global setup: one per run, torn down after every
 * project). vitest.config.ts makes it the test processes' TMPDIR, so everything a test makes
 * with `os.tmpdir()` (state folders, keys, outboxes, CDK assemblies, Chromium profiles) and the
 * temporary files of the processes it starts land in it, and nothing of another run does. After
 * the run it must be empty, and the repository's `.local/` (the state of `npm start`) must have
 * no new entry: otherwise the teardown throws, naming what was left, which fails `vitest run`.
 * The folder is removed either way.
 */
export default function setup(project: TestProject) {
  const dir = project.config.env.TMPDIR;
  if (!dir) throw new Error('vitest.config.ts gives the tests no TMPDIR');
  // A folder of a crashed run with the same process id is stale; so are those of runs that were
  // killed before their teardown (an interrupted `vitest run`), whose process is gone.
  rmSync(dir, { recursive: true, force: true });
  removeFoldersOfEndedRuns(dirname(dir));
  mkdirSync(dir, { recursive: true });
  const local = join(project.config.root, '.local');
  const hadLocal = existsSync(local);
  const localBefore = new Set(entries(local));

  return () => {
    const left = entries(dir).filter((name) => !TOOL_CACHES.test(name));
    rmSync(dir, { recursive: true, force: true });
    const written = entries(local).filter((name) => !localBefore.has(name));
    if (!hadLocal && existsSync(local) && written.length === 0) written.push('');
    const problems = [
      ...left.map((name) => `${join(dir, name)} (left in the temporary folder)`),
      ...written.map((name) => `${join(local, name)} (written by the tests into the repository's .local/)`),
    ];
    if (problems.length > 0) {
      throw new Error(`The tests did not clean up after themselves; each test removes what it makes (afterAll or finally):\n  ${problems.join('\n  ')}`);
    }
  };
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The run folders (`dus-run-<pid>`, `dus-aws-calls-<pid>`, vitest.config.ts) in `parent` whose run's process no longer exists. */
function removeFoldersOfEndedRuns(parent: string): void {
  for (const name of entries(parent)) {
    const pid = /^dus-(?:run|aws-calls)-(\d+)$/.exec(name)?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) rmSync(join(parent, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
