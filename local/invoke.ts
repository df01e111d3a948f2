import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { FUNCTIONS } from '#functions/registry';
import { fail, parseCommandLine, usageError } from '#local/cli';
import { invokeFunction, isFunctionName } from '#local/invoke-function';
import { readServiceFacts } from '#local/service';

// `npm run invoke -- <function> [event.json]`: runs one handler, in this process, against the
// running local service (like `sam local invoke`), with that service's environment. Without an
// event file it sends the function's sample event (`sample` of its declaration, local/sample-events.ts).
const usage = `Usage: npm run invoke -- <function> [event.json]
Runs one function's handler in this process against the running local service (start it with
npm start), with an API Gateway payload 2.0 event (a scheduled function: its input, such as
{"mode":"report"}): the file's, or the function's sample event.
Functions: ${Object.keys(FUNCTIONS).join(', ')}`;

const tool = { name: 'invoke', usage };
const { positionals } = parseCommandLine(tool, { allowPositionals: true, options: {} });
const [name, eventFile, ...extra] = positionals;
if (!name) fail(usage);
if (extra.length > 0) usageError(tool, `Unexpected argument '${extra[0]}'`);
if (!isFunctionName(name)) fail(`Unknown function '${name}' (npm run invoke -- --help lists them).`);
const facts = (() => {
  try {
    return readServiceFacts();
  } catch (error) {
    return fail((error as Error).message);
  }
})();

let event: APIGatewayProxyEventV2 | undefined;
if (eventFile) {
  try {
    event = JSON.parse(readFileSync(eventFile, 'utf8')) as APIGatewayProxyEventV2;
  } catch (error) {
    fail(`Cannot read the event ${eventFile}: ${(error as Error).message}`);
  }
}
// The handler's log lines go to stderr, as with `sam local invoke`: stdout is the result alone.
const stdoutWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
const { result, sample } = await invokeFunction(facts, name, event).finally(() => {
  process.stdout.write = stdoutWrite;
});
if (sample) console.error(`Sample event: ${sample}`);
console.log(JSON.stringify(result, null, 2));
