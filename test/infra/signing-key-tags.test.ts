import { beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_KEY_TAG_KEY } from '#shared/keys/kms-keys';
import { UPGRADE_ROLE_TAG_KEY } from '#infra/constructs/signing-key';
import { ENV } from '#shared/config';
import { endpointOf } from '#functions/registry';
import {
  ACCOUNT, readDeployedForm, REGION, STACK_ID, STACK_NAME, synthesizeTemplate, type DeployedForm, type DeployedFunction, type PolicyDocument,
} from '../support/deployed-form';
import { iamVerdict } from '../support/iam-evaluator';

// Tags are permissions in ABAC, so who may tag what is part of the permissions. KMS authorizes the
// Tags of CreateKey as kms:TagResource, which "to add tags while creating a KMS key" must be granted
// "in an IAM policy that isn't restricted to particular KMS keys" (AWS KMS Developer Guide,
// "Controlling access to tags"): no IAM policy can allow tagging new keys only. So no role of the
// stack may tag at all, and no permission follows a tag, on a key or on a principal: a principal's
// tags (its role's, or its session's: sts:TagSession) are whatever anyone allowed iam:TagRole,
// iam:TagUser or sts:TagSession gives it. The keys the rotation creates carry their permissions in
// their key policy, given at CreateKey and again at every deployment, naming the token function's and
// the rotation's roles by ARN. Checked here on the deployed roles (the synthesized template) with the
// IAM evaluator the IAM proof uses.

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
  /** The principal's tags (its role's or its session's) instead of its role's own. */
  principalTags?: Record<string, string>;
  callerAccount?: string;
}

/** What KMS puts in every request on an RSA signing key (the rotated keys are such). */
const SIGNING_KEY_CONTEXT = { 'kms:KeySpec': 'RSA_2048', 'kms:KeyUsage': 'SIGN_VERIFY', 'kms:KeyOrigin': 'AWS_KMS' };

/** The evaluator's verdict on `principal` (a function's role, or anyone's) doing `action` on `resource`. */
async function verdictOf(principal: { roleArn: string; policies: DeployedFunction['policies']; principalTags?: Record<string, string> }, action: string, resource: string, ask: Ask = {}): Promise<string> {
  const principalTags = ask.principalTags ?? principal.principalTags ?? {};
  return iamVerdict({
    principal: principal.roleArn,
    action,
    resource,
    context: {
      'kms:CallerAccount': ask.callerAccount ?? ACCOUNT,
      ...SIGNING_KEY_CONTEXT,
      ...Object.fromEntries(Object.entries(principalTags).map(([key, value]) => [`aws:PrincipalTag/${key}`, value])),
      ...ask.context,
    },
    identityPolicies: principal.policies,
    ...(ask.resourcePolicy ? { resourcePolicy: ask.resourcePolicy } : {}),
  });
}
const verdict = (fn: DeployedFunction, action: string, resource: string, ask: Ask = {}) => verdictOf(fn, action, resource, ask);

const requestTags = (tags: Record<string, string>) => ({
  ...Object.fromEntries(Object.entries(tags).map(([key, value]) => [`aws:RequestTag/${key}`, value])), 'aws:TagKeys': Object.keys(tags),
});

describe('signing-key tags', () => {
  it('the stack\'s own key names this deployment of the stack (`<stack name>/<unique part of the stack id>`); only the two roles keep the earlier versions\' role tag, for the upgrade', () => {
    expect(owner).toBe(`${STACK_NAME}/${STACK_GUID}`);
    expect(form.signingKeyTags).toEqual({ [SIGNING_KEY_TAG_KEY]: owner });
    expect(token.principalTags).toEqual({ [UPGRADE_ROLE_TAG_KEY]: `${owner}:sign` });
    expect(rotation.principalTags).toEqual({ [UPGRADE_ROLE_TAG_KEY]: `${owner}:rotate` });
    expect(form.functions.filter((fn) => Object.keys(fn.principalTags).length > 0)).toHaveLength(2);
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
    // PutKeyPolicy aside: the rotation may re-apply its policy to any RSA signing key, tagged or not (the next test).
    const tagged = { context: { [`aws:ResourceTag/${SIGNING_KEY_TAG_KEY}`]: owner }, resourcePolicy: DEFAULT_KEY_POLICY };
    const allowed: string[] = [];
    for (const fn of form.functions) {
      for (const action of ['kms:Sign', 'kms:GetPublicKey', 'kms:ScheduleKeyDeletion', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias', 'kms:TagResource']) {
        if (await verdict(fn, action, OTHER_KEY, tagged) === 'Allowed') allowed.push(`${fn.routes.join(', ')}: ${action}`);
      }
    }
    expect(allowed).toEqual([]);
  });

  it('a key the rotation creates is usable by the token function (sign) and the rotation (publish, alias, re-policy, delete) alone', async () => {
    const created = { resourcePolicy: rotatedPolicy() };
    expect(await verdict(token, 'kms:Sign', ROTATED_KEY, created)).toBe('Allowed');
    for (const action of ['kms:GetPublicKey', 'kms:ScheduleKeyDeletion', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias', 'kms:PutKeyPolicy']) {
      expect(await verdict(rotation, action, ROTATED_KEY, created), action).toBe('Allowed');
    }
    const refused: [DeployedFunction, string, Ask?][] = [
      [token, 'kms:ScheduleKeyDeletion'], [token, 'kms:PutKeyPolicy'], [rotation, 'kms:Sign'], [jwks, 'kms:Sign'], [jwks, 'kms:GetPublicKey'],
      // A role of another account, even one given the tags the earlier versions trusted.
      [{ ...token, roleArn: token.roleArn.replace(ACCOUNT, '210987654321') }, 'kms:Sign', { callerAccount: '210987654321', principalTags: { [UPGRADE_ROLE_TAG_KEY]: `${owner}:sign` } }],
    ];
    for (const [fn, action, ask] of refused) {
      expect(await verdict(fn, action, ROTATED_KEY, { ...created, ...ask }), `${fn.routes.join(', ')}: ${action} ${JSON.stringify(ask ?? {})}`).not.toBe('Allowed');
    }
  });

  it('no other principal of the account may sign with or delete a rotated key, whatever tags it or its session carries', async () => {
    const created = { resourcePolicy: rotatedPolicy() };
    // An operator script's role, a CI role, a user's session: none with any KMS permission of its own.
    const principals = [`arn:aws:iam::${ACCOUNT}:role/ci-deployer`, `arn:aws:sts::${ACCOUNT}:assumed-role/operator/alice`, `arn:aws:iam::${ACCOUNT}:user/script`];
    const tagSets: Record<string, string>[] = [
      // The tags earlier versions trusted, given by iam:TagRole or iam:TagUser, or as session tags (sts:TagSession).
      { [UPGRADE_ROLE_TAG_KEY]: `${owner}:sign` },
      { [UPGRADE_ROLE_TAG_KEY]: `${owner}:rotate` },
      // The stack's other tags, and anything else.
      { [SIGNING_KEY_TAG_KEY]: owner, Stage: 'prod', 'aws:cloudformation:stack-name': STACK_NAME },
      {},
    ];
    const allowed: string[] = [];
    for (const roleArn of principals) {
      for (const principalTags of tagSets) {
        for (const action of ['kms:Sign', 'kms:ScheduleKeyDeletion', 'kms:GetPublicKey', 'kms:PutKeyPolicy', 'kms:UpdateAlias']) {
          if (await verdictOf({ roleArn, policies: [] }, action, ROTATED_KEY, { ...created, principalTags }) === 'Allowed') {
            allowed.push(`${roleArn} ${JSON.stringify(principalTags)}: ${action}`);
          }
        }
      }
    }
    expect(allowed).toEqual([]);
  });

  it('after CloudFormation replaces the roles, the policy the deployment re-applies allows the new roles and not the old ones; the new rotation role may re-apply it over the old policy', async () => {
    // The lifecycle resource carries the policy with the roles' ARNs: a replaced role changes it, and
    // CloudFormation then sends the Update on which the function puts it on every rotated key.
    expect(form.lifecycleKeyPolicy).toBe(rotation.environment[ENV.signingKeyPolicy]);
    const before = form.lifecycleKeyPolicy;
    expect(before).toContain(token.roleArn);
    expect(before).toContain(rotation.roleArn);
    const replaced = (fn: DeployedFunction) => ({ ...fn, roleArn: `${fn.roleArn}-Xk2q9ReplacedRole` });
    const [newToken, newRotation] = [replaced(token), replaced(rotation)];
    const after = JSON.parse(before.replaceAll(`"${token.roleArn}"`, `"${newToken.roleArn}"`).replaceAll(`"${rotation.roleArn}"`, `"${newRotation.roleArn}"`)) as PolicyDocument;
    const old = { resourcePolicy: JSON.parse(before) as PolicyDocument };

    // Until the Update, a replaced role can do nothing with a rotated key but re-apply its policy.
    expect(await verdict(newToken, 'kms:Sign', ROTATED_KEY, old)).not.toBe('Allowed');
    expect(await verdict(newRotation, 'kms:ScheduleKeyDeletion', ROTATED_KEY, old)).not.toBe('Allowed');
    expect(await verdict(newRotation, 'kms:PutKeyPolicy', ROTATED_KEY, old)).toBe('Allowed');
    // A key an earlier version created: the policy that trusted tagged roles, or KMS's default one.
    expect(await verdict(newRotation, 'kms:PutKeyPolicy', ROTATED_KEY, { resourcePolicy: DEFAULT_KEY_POLICY })).toBe('Allowed');
    // Only on RSA signing keys of this account.
    expect(await verdict(newRotation, 'kms:PutKeyPolicy', OTHER_KEY, { resourcePolicy: DEFAULT_KEY_POLICY, context: { 'kms:KeySpec': 'SYMMETRIC_DEFAULT', 'kms:KeyUsage': 'ENCRYPT_DECRYPT' } })).not.toBe('Allowed');

    const reapplied = { resourcePolicy: after };
    expect(await verdict(newToken, 'kms:Sign', ROTATED_KEY, reapplied)).toBe('Allowed');
    expect(await verdict(newRotation, 'kms:ScheduleKeyDeletion', ROTATED_KEY, reapplied)).toBe('Allowed');
    expect(await verdict(token, 'kms:Sign', ROTATED_KEY, reapplied)).not.toBe('Allowed');
    expect(await verdict(rotation, 'kms:ScheduleKeyDeletion', ROTATED_KEY, reapplied)).not.toBe('Allowed');
  });
});

/** The key policy the deployed rotation function gives (and re-applies to) each key it creates. */
function rotatedPolicy(): PolicyDocument {
  return JSON.parse(rotation.environment[ENV.signingKeyPolicy]!) as PolicyDocument;
}
