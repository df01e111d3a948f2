import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { App } from 'aws-cdk-lib';

const made: App[] = [];

/** cdk.json's context (the feature flags): what `cdk synth` and `cdk deploy` give the app. */
const CDK_JSON_CONTEXT = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

/**
 * A CDK app for template tests, with cdk.json's feature flags (the template deployed is the template
 * tested), `context`, and without bundling (`cdk synth` in CI bundles every function; the template
 * is the same). An App makes a temporary folder for its cloud assembly as soon as it is constructed,
 * and removes it only when its process exits normally, which a test worker need not do: call
 * `removeTestApps()` after the tests.
 */
export function testApp(context: Record<string, unknown>): App {
  const app = new App({ context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
  made.push(app);
  return app;
}

/** Removes the assembly folders of every app `testApp` made so far. */
export function removeTestApps(): void {
  for (const app of made.splice(0)) rmSync(app.outdir, { recursive: true, force: true });
}
