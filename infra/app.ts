import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { createServiceStack, StackConfigurationError } from '#infra/stack';

// `npx cdk synth` / `npx cdk deploy -c mailFrom=<SES-verified sender> [-c stage=<stage>] [-c domain=…]`:
// one stack per stage (infra/settings.ts), checked by cdk-nag's AwsSolutions pack.
const app = new App();
try {
  createServiceStack(app, {
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
} catch (error) {
  if (!(error instanceof StackConfigurationError)) throw error;
  console.error(`\n${error.message}\n`);
  process.exit(1);
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
