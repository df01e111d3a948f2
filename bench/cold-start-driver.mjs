// Cold start probe, run as `node cold-start-driver.mjs <bundle.mjs> <event.json>` in a fresh process.
// It imports the bundle and serves one event, and reports (one JSON line after a marker on stdout):
// milliseconds from process start (performance.timeOrigin) to the end of import and to the first
// response, the process's CPU time until then, the response's status (a function without an HTTP route: its result),
// and whether anything opened a socket or read the local signing key during module load.
// Only Node built-ins are loaded before the bundle, so this adds the same small constant to every
// bundle, the baseline included.
import { readFileSync } from 'node:fs';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { pathToFileURL } from 'node:url';

const [bundle, eventFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const keyFile = process.env.LOCAL_SIGNING_KEY_FILE;

let loading = true;
const socketsAtLoad = [];
const filesReadAtLoad = [];
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  if (loading) {
    const options = typeof args[0] === 'object' && args[0] !== null && !Array.isArray(args[0]) ? args[0] : { port: args[0], host: args[1] };
    socketsAtLoad.push(options.path ?? `${options.host ?? 'localhost'}:${options.port}`);
  }
  return connect.apply(this, args);
};
for (const name of ['readFileSync', 'readFile']) {
  const original = fs[name];
  fs[name] = function (path, ...rest) {
    if (loading) filesReadAtLoad.push(String(path));
    return original.call(this, path, ...rest);
  };
}
const readFilePromise = fs.promises.readFile;
fs.promises.readFile = function (path, ...rest) {
  if (loading) filesReadAtLoad.push(String(path));
  return readFilePromise.call(this, path, ...rest);
};
// Named imports of node:fs in the bundle see the wrappers only after this.
syncBuiltinESMExports();

const importStart = performance.now();
const module = await import(pathToFileURL(bundle).href);
const imported = performance.now();
// Let whatever module load scheduled run (Lambda's runtime also waits for its next event here).
await new Promise((resolve) => setImmediate(resolve));
loading = false;
const activeAtLoad = process.getActiveResourcesInfo().filter((type) => /TCP|GetAddrInfo|TLS|UDP/.test(type));

const context = {
  callbackWaitsForEmptyEventLoop: true, functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench', functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:bench', memoryLimitInMB: '512', awsRequestId: 'cold-start',
  logGroupName: '/aws/lambda/bench', logStreamName: 'bench', getRemainingTimeInMillis: () => 10_000,
};
const handlerStart = performance.now();
const response = await module.handler(event, context);
const done = performance.now();
const cpu = process.cpuUsage();

process.stdout.write(`\n@@cold-start@@${JSON.stringify({
  totalMs: done,
  bootMs: importStart,
  importMs: imported - importStart,
  firstCallMs: done - handlerStart,
  // CPU of the whole process up to the response: less sensitive than wall time to other load.
  cpuMs: (cpu.user + cpu.system) / 1000,
  status: response?.statusCode,
  // A function without an HTTP route answers no status: its result, for the benchmark to check.
  ...(response?.statusCode === undefined ? { result: response ?? null } : {}),
  socketsAtLoad: [...new Set([...socketsAtLoad, ...activeAtLoad])],
  keyFileReadAtLoad: keyFile !== undefined && filesReadAtLoad.some((file) => file === keyFile),
})}\n`, () => process.exit(0));
