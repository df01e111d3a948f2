import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DeviceUserServiceStack } from '#infra/stack';
import { testApp } from './cdk-app';
import { deployedTemplate } from './deployed-form';

/** A resource of a synthesized template, as the template tests read it. */
export type Resource = { Type: string; Properties: Record<string, any> };

/**
 * The service's stack `id`, synthesized as `cdk synth` does with cdk-nag's AwsSolutions checks
 * (a sender on a reserved domain, `context` added): its deployed resources, nested stacks' included,
 * and what cdk-nag said (undefined: no finding). Remove the app with removeTestApps afterwards.
 */
export function nagCheckedStack(id: string, context: Record<string, unknown> = {}): { resources: Record<string, Resource>; nagError: unknown } {
  const app = testApp({ mailFrom: 'no-reply@mail.stack-test.invalid', ...context });
  const stack = new DeviceUserServiceStack(app, id);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const resources = deployedTemplate(stack).Resources as Record<string, Resource>;
  let nagError: unknown;
  try {
    app.synth();
  } catch (error) {
    nagError = error;
  }
  return { resources, nagError };
}
