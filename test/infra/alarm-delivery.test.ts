import { beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, readDeployedForm, REGION, synthesizeTemplate, type DeployedForm } from '../support/deployed-form';
import { iamAllows as allowed } from '../support/iam-evaluator';

// Alarm delivery and the failed scheduled run, judged by AWS's policy evaluation (@cloud-copilot/iam-simulate) on the
// synthesized template: CloudWatch may publish the alarms to the alarm topic (a topic policy replaces
// SNS's default one, so without an Allow nothing could), and a scheduled run that fails every try
// (the signing-key rotation) ends in a queue that an alarm watches.

describe('alarms reach the topic; failed scheduled runs reach an alarm', () => {
  let form: DeployedForm;
  beforeAll(() => {
    form = readDeployedForm(synthesizeTemplate());
  });

  const publishByCloudWatch = (alarmAccount: string, secure = 'true') => allowed({
    principal: 'cloudwatch.amazonaws.com',
    action: 'sns:Publish',
    resource: form.alarmTopic.arn,
    resourcePolicy: form.alarmTopic.policy,
    context: {
      'aws:SourceArn': `arn:aws:cloudwatch:${REGION}:${alarmAccount}:alarm:DeviceUserService-KmsErrors`,
      'aws:SourceAccount': alarmAccount,
      'aws:SecureTransport': secure,
    },
  });

  it('CloudWatch may publish this account\'s alarms to the topic', async () => {
    expect(await publishByCloudWatch(ACCOUNT)).toBe(true);
  });

  it('but not another account\'s alarms, and not over plain HTTP', async () => {
    expect(await publishByCloudWatch('210987654321')).toBe(false);
    expect(await publishByCloudWatch(ACCOUNT, 'false')).toBe(false);
  });

  it('the rotation\'s schedule retries, then dead-letters into its failures queue, which EventBridge may write to', async () => {
    expect(form.scheduledFailures.map(({ fn }) => fn.routes)).toEqual([['schedule rate(1 hour)']]);
    for (const { ruleArn, queueArn, queuePolicy } of form.scheduledFailures) {
      expect(queueArn).toMatch(/^arn:aws:sqs:/);
      const send = (sourceArn: string) => allowed({
        principal: 'events.amazonaws.com', action: 'sqs:SendMessage', resource: queueArn, resourcePolicy: queuePolicy,
        context: { 'aws:SourceArn': sourceArn, 'aws:SecureTransport': 'true' },
      });
      expect(await send(ruleArn)).toBe(true);
      expect(await send(`arn:aws:events:${REGION}:${ACCOUNT}:rule/SomeoneElsesRule`)).toBe(false);
    }
  });

  it('a run that failed its three tries goes to the same queue, sent by Lambda with the function\'s role', async () => {
    for (const { fn, queueArn, invokeConfig } of form.scheduledFailures) {
      expect(invokeConfig).toMatchObject({ MaximumRetryAttempts: 2, DestinationConfig: { OnFailure: { Destination: queueArn } } });
      expect(await allowed({ principal: fn.roleArn, action: 'sqs:SendMessage', resource: queueArn, identityPolicies: fn.policies })).toBe(true);
    }
  });
});
