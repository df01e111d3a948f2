import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';

const made: App[] = [];

/**
 * A CDK app for template tests, with `context` and without bundling (`cdk synth` in CI bundles
 * every function; the template is the same). An App makes a temporary folder for its cloud
 * assembly as soon as it is constructed, and removes it only when its process exits normally,
 * which a test worker need not do: call `removeTestApps()` after the tests.
 */
export function testApp(context: Record<string, unknown>): App {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  made.push(app);
  return app;
}

/** Removes the assembly folders of every app `testApp` made so far. */
export function removeTestApps(): void {
  for (const app of made.splice(0)) rmSync(app.outdir, { recursive: true, force: true });
}
