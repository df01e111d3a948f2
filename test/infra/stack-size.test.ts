import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceStack } from '#infra/stack';
import { removeTestApps, testApp } from '../support/cdk-app';

// CloudFormation refuses a template of more than 500 resources, and each endpoint adds several.
// The stack is split (infra/constructs/function-areas.ts) so that every template, the parent's and
// each nested stack's, stays under LIMIT with every optional context value set; the operators' guide's table (docs/deploying.md)
// of resource counts must be what this test counts.

const LIMIT = 300;
const EVERY_OPTION = {
  mailFrom: 'no-reply@mail.example.org',
  alarmEmail: 'oncall@example.org',
  tracing: 'true',
  domain: 'example.org',
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
};
/** A stage that keeps its data and one that does not: each may add resources of its own. */
const STAGES = ['prod', 'dev1'];

/** `DeviceUserService` for the parent, else the nested stack's construct id: its resource count. */
function countsOf(stack: Stack): Map<string, number> {
  const counts = new Map([['parent stack', Object.keys(Template.fromStack(stack).toJSON().Resources).length]]);
  for (const nested of stack.node.findAll().filter(NestedStack.isNestedStack)) {
    counts.set(nested.node.id, Object.keys(Template.fromStack(nested).toJSON().Resources).length);
  }
  return counts;
}

/** The operators' guide's table (docs/deploying.md): `| <stack> | <resources> |` rows between the two markers. */
function documentedCounts(): Map<string, number> {
  const readme = readFileSync(resolve(import.meta.dirname, '../../docs/deploying.md'), 'utf8');
  const table = /<!-- stack-sizes -->([\s\S]*?)<!-- \/stack-sizes -->/.exec(readme)?.[1];
  if (!table) throw new Error('docs/deploying.md has no <!-- stack-sizes --> table');
  return new Map([...table.matchAll(/^\| `?([\w ]+?)`? \| (\d+) \|$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

afterAll(removeTestApps);

describe('stack size: every template under 300 resources with every option', () => {
  const byStage = new Map<string, Map<string, number>>();
  /** Each stack's count in the stage where it is largest. */
  const largest = new Map<string, number>();

  beforeAll(() => {
    for (const stage of STAGES) {
      const counts = countsOf(createServiceStack(testApp({ ...EVERY_OPTION, stage }), { env: { account: '123456789012', region: 'eu-west-1' } }));
      byStage.set(stage, counts);
      for (const [name, count] of counts) largest.set(name, Math.max(largest.get(name) ?? 0, count));
    }
  });

  it('splits the service into a parent and its nested stacks of functions', () => {
    expect([...largest.keys()].sort()).toEqual(
      ['AuthServerFunctions', 'ConsoleFunctions', 'DevicesFunctions', 'OperationsFunctions', 'ResourceApiFunctions', 'WebhooksFunctions', 'parent stack']);
  });

  it.each(STAGES)('keeps every template of stage %s under the limit', (stage) => {
    const over = [...byStage.get(stage)!].filter(([, count]) => count >= LIMIT).map(([name, count]) => `${name}: ${count}`);
    expect(over).toEqual([]);
  });

  // Within a tenth or 15 resources, so that a new endpoint (about six resources in its area's stack,
  // up to 15 in the parent for a resource path, bare and under /api) needs no edit of that table, while the
  // table never drifts far from the truth.
  it('the operators\' guide lists each stack with a count within 10 % or 15 resources of the one synthesized here', () => {
    const table = [...largest].sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => `| ${name === 'parent stack' ? name : `\`${name}\``} | ${count} |`).join('\n');
    const documented = documentedCounts();
    expect([...documented.keys()].sort(), `docs/deploying.md's stack-sizes table should read:\n${table}`).toEqual([...largest.keys()].sort());
    const off = [...largest].filter(([name, count]) => Math.abs(documented.get(name)! - count) > Math.max(count / 10, 15));
    expect(off, `docs/deploying.md's stack-sizes table should read:\n${table}`).toEqual([]);
  });
});
