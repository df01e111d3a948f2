import { randomUUID } from 'node:crypto';

// CloudFormation has no local engine. The rotation function asks it one thing, the status of its own
// stack (DescribeStacks), to tell the stack's deletion from a rollback: this answers that in
// CloudFormation's query protocol (a form-encoded POST, an XML answer), so that the real SDK client
// runs unchanged against the AWS stand-ins' server (local/aws-stand-ins.ts).

/** The stand-in's one stack: its id and its status, which a test sets. */
export interface StandInStack {
  stackId: string;
  status: string;
}

/** CloudFormation's answer to a DescribeStacks form, or undefined when the form asks something else. */
export function describeStacks(form: URLSearchParams, stack: StandInStack): { status: number; body: string } | undefined {
  if (form.get('Action') !== 'DescribeStacks') return undefined;
  const requestId = `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata>`;
  const name = form.get('StackName') ?? '';
  if (name !== stack.stackId && name !== stack.stackId.split('/')[1]) {
    return {
      status: 400,
      body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code>`
        + `<Message>Stack with id ${escapeXml(name)} does not exist</Message></Error>${requestId}</ErrorResponse>`,
    };
  }
  return {
    status: 200,
    body: `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>`
      + `<StackId>${escapeXml(stack.stackId)}</StackId><StackName>${escapeXml(stack.stackId.split('/')[1] ?? '')}</StackName>`
      + `<CreationTime>2026-01-01T00:00:00.000Z</CreationTime><StackStatus>${escapeXml(stack.status)}</StackStatus>`
      + `</member></Stacks></DescribeStacksResult>${requestId}</DescribeStacksResponse>`,
  };
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
