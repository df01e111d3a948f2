import { createServer } from 'node:http';

/** One answer a custom resource's function sent to CloudFormation's pre-signed URL. */
export interface CaughtResponse {
  method?: string;
  contentType?: string;
  body: Record<string, unknown>;
}

/**
 * A stand-in for the pre-signed S3 URL CloudFormation gives a custom resource's function to answer
 * at (the `ResponseURL` of the event): it keeps every PUT it receives. Stop it after the test.
 */
export async function catchCloudFormationResponses() {
  const responses: CaughtResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      responses.push({ method: req.method, contentType: req.headers['content-type'], body: JSON.parse(body) as Record<string, unknown> });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    /** A URL to give as ResponseURL (with a query, as a pre-signed URL has). */
    url: `http://127.0.0.1:${port}/cloudformation-response?X-Amz-Signature=stand-in`,
    responses,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
