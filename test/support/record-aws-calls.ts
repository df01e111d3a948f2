import { randomUUID } from 'node:crypto';
import { relative } from 'node:path';
import { afterAll, expect, inject } from 'vitest';
import { saveRecording, startRecording } from './aws-calls.ts';

// Set-up file of every test file of the main suite: records the AWS calls of each function the
// file runs, for the IAM test (test/infra/iam-grants.test.ts), which runs after the suite.
const recorder = startRecording(() => {
  const { testPath, currentTestName } = expect.getState();
  return `${relative(process.cwd(), testPath ?? '')} > ${currentTestName ?? '(set-up)'}`;
});

afterAll(() => {
  recorder.stop();
  const recording = recorder.recording();
  if (recording.calls.length > 0 || recording.invocations.length > 0) {
    saveRecording(inject('awsCallsDir'), `${process.pid}-${randomUUID()}`, recording);
  }
});
