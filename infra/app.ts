import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DeviceUserServiceStack } from '#infra/stack';

// `npx cdk synth` / `npx cdk deploy`: one stack, checked by cdk-nag's AwsSolutions pack.
const app = new App();
new DeviceUserServiceStack(app, 'DeviceUserService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
