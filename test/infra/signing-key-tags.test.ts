import { beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_KEY_ROLE_TAG_KEY, SIGNING_KEY_TAG_KEY } from '#shared/keys/kms-keys';
import { ENV } from '#shared/config';
import { endpointOf } from '#functions/endpoints';
import {
  ACCOUNT, readDeployedForm, REGION, STACK_ID, STACK_NAME, synthesizeTemplate, type DeployedForm, type DeployedFunction, type PolicyDocument,
} from '../support/deployed-form';
import { iamVerdict } from '../support/iam-evaluator';

// Tags are permissions in ABAC, so who may tag what is part of the permissions.
// KMS authorizes the Tags of CreateKey as kms:TagResource, which "to add tags while creating a KMS
// key" must be granted "in an IAM policy that isn't restricted to particular KMS keys" (AWS KMS
// Developer Guide, "Controlling access to tags"): no IAM policy can allow tagging new keys only. So
// no role of the stack may tag at all, and no permission follows a tag: the keys the rotation creates
// carry their permissions in their key policy, given at CreateKey. Checked here on the deployed
// roles (the synthesized template) with the IAM evaluator the IAM proof uses, for any key of the
// account under KMS's default key policy (which leaves the decision to IAM policies).

/** The key policy KMS gives a key created without one ("Default key policy", KMS Developer Guide). */
const DEFAULT_KEY_POLICY: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${ACCOUNT}:root` }, Action: 'kms:*', Resource: '*' }],
};
/** Some other key of the account: another team's, another stack's, anything. */
const OTHER_KEY = `arn:aws:kms:${REGION}:${ACCOUNT}:key/0b1c2d3e-4f50-4a6b-9c7d-8e9f0a1b2c3d`;
/** A key the rotation created (with the key policy it passes). */
const ROTATED_KEY = `arn:aws:kms:${REGION}:${ACCOUNT}:key/7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d`;
const STACK_GUID = STACK_ID.split('/').pop()!;

let form: DeployedForm;
let rotation: DeployedFunction;
let token: DeployedFunction;
let jwks: DeployedFunction;
/** The name of this deployment (SIGNING_KEY_TAG), as CloudFormation resolves it. */
let owner: string;

beforeAll(() => {
  form = readDeployedForm(synthesizeTemplate());
  rotation = form.functionOfRoute.get(`schedule ${endpointOf('rotate-signing-key').schedule}`)!;
  token = form.functionOfRoute.get('auth POST /oauth/token')!;
  jwks = form.functionOfRoute.get('auth GET /.well-known/jwks.json')!;
  owner = rotation.environment[ENV.signingKeyTag]!;
});

interface Ask {
  /** Condition keys of the request (request tags, the key's tags); the principal's tags and account are added. */
  context?: Record<string, string | string[]>;
  resourcePolicy?: PolicyDocument;
  /** The principal's tags instead of its role's (a role of another stack, say). */
  principalTags?: Record<string, string>;
  callerAccount?: string;
}

/** The evaluator's verdict on `fn`'s role doing `action` on `resource`. */
async function verdict(fn: DeployedFunction, action: string, resource: string, ask: Ask = {}): Promise<string> {
  const principalTags = ask.principalTags ?? fn.principalTags ?? {};
  return iamVerdict({
    principal: fn.roleArn,
    action,
    resource,
    context: {
      'kms:CallerAccount': ask.callerAccount ?? ACCOUNT,
      ...Object.fromEntries(Object.entries(principalTags).map(([key, value]) => [`aws:PrincipalTag/${key}`, value])),
      ...ask.context,
    },
    identityPolicies: fn.policies,
    ...(ask.resourcePolicy ? { resourcePolicy: ask.resourcePolicy } : {}),
  });
}

const requestTags = (tags: Record<string, string>) => ({
  ...Object.fromEntries(Object.entries(tags).map(([key, value]) => [`aws:RequestTag/${key}`, value])), 'aws:TagKeys': Object.keys(tags),
});

describe('signing-key tags', () => {
  it('name this deployment of the stack, not only its name: `<stack name>/<unique part of the stack id>`', () => {
    expect(owner).toBe(`${STACK_NAME}/${STACK_GUID}`);
    expect(form.signingKeyTags).toEqual({ [SIGNING_KEY_TAG_KEY]: owner });
    expect(token.principalTags).toEqual({ [SIGNING_KEY_ROLE_TAG_KEY]: `${owner}:sign` });
    expect(rotation.principalTags).toEqual({ [SIGNING_KEY_ROLE_TAG_KEY]: `${owner}:rotate` });
  });

  it('the rotation role may tag no existing key, whatever tags the request carries: another key of the account, or the stack\'s own', async () => {
    const tagging = requestTags({ [SIGNING_KEY_TAG_KEY]: owner });
    expect(await verdict(rotation, 'kms:TagResource', OTHER_KEY, { context: tagging, resourcePolicy: DEFAULT_KEY_POLICY })).not.toBe('Allowed');
    expect(await verdict(rotation, 'kms:TagResource', form.signingKeyArn, { context: tagging, resourcePolicy: form.keyPolicy })).not.toBe('Allowed');
  });

  it('the rotation still creates keys as it asks for them (a key policy, no tags); CreateKey with tags is denied, as it would need kms:TagResource on every key', async () => {
    expect(await verdict(rotation, 'kms:CreateKey', '*')).toBe('Allowed');
    expect(await verdict(rotation, 'kms:TagResource', '*', { context: requestTags({ [SIGNING_KEY_TAG_KEY]: owner }) })).not.toBe('Allowed');
  });

  it('a tag grants nothing: no function may sign with, read, alias, tag or delete a key because it carries this stack\'s signing tag', async () => {
    const tagged = { context: { [`aws:ResourceTag/${SIGNING_KEY_TAG_KEY}`]: owner }, resourcePolicy: DEFAULT_KEY_POLICY };
    const allowed: string[] = [];
    for (const fn of form.functions) {
      for (const action of ['kms:Sign', 'kms:GetPublicKey', 'kms:ScheduleKeyDeletion', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias', 'kms:TagResource']) {
        if (await verdict(fn, action, OTHER_KEY, tagged) === 'Allowed') allowed.push(`${fn.routes.join(', ')}: ${action}`);
      }
    }
    expect(allowed).toEqual([]);
  });

  it('a key the rotation creates is usable by the token function (sign) and the rotation (publish, alias, delete) alone, through the key policy it was created with', async () => {
    const created = { resourcePolicy: JSON.parse(rotation.environment[ENV.signingKeyPolicy]!) as PolicyDocument };
    expect(await verdict(token, 'kms:Sign', ROTATED_KEY, created)).toBe('Allowed');
    for (const action of ['kms:GetPublicKey', 'kms:ScheduleKeyDeletion', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias']) {
      expect(await verdict(rotation, action, ROTATED_KEY, created), action).toBe('Allowed');
    }
    const refused: [DeployedFunction, string, Ask?][] = [
      [token, 'kms:ScheduleKeyDeletion'], [rotation, 'kms:Sign'], [jwks, 'kms:Sign'], [jwks, 'kms:GetPublicKey'],
      // A role of a later stack of the same name (another stack id), or of another account with the same tag.
      [token, 'kms:Sign', { principalTags: { [SIGNING_KEY_ROLE_TAG_KEY]: `${STACK_NAME}/11111111-2222-4333-8444-555555555555:sign` } }],
      [token, 'kms:Sign', { callerAccount: '210987654321' }],
    ];
    for (const [fn, action, ask] of refused) {
      expect(await verdict(fn, action, ROTATED_KEY, { ...created, ...ask }), `${fn.routes.join(', ')}: ${action} ${JSON.stringify(ask ?? {})}`).not.toBe('Allowed');
    }
  });
});
