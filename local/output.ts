// `npm start`'s output: every request writes a log line and a metric line to stdout, and a write to
// a terminal or a pipe is a system call that wakes its reader (Node writes them synchronously). Under
// load that was about 2 % of the service's CPU per token refresh. Here the lines written during one
// turn of the event loop leave in one write, at its end: the same bytes in the same order, a turn
// later at most. Lambda's functions write as they always do; only the local process batches.

/** The stream's `write`, as Node types it. */
type Write = NodeJS.WriteStream['write'];

/**
 * Batches the plain text writes to `stream` made in one turn of the event loop (`schedule` decides
 * when the batch leaves; a write with a callback, bytes, or a write to `before`, e.g. stderr, sends
 * what is waiting first, so no line overtakes another), and sends what is left when the process
 * exits. Returns what undoes it.
 */
export function batchWrites(stream: NodeJS.WriteStream, options: { before?: NodeJS.WriteStream[]; schedule?: (flush: () => void) => void } = {}): () => void {
  const schedule = options.schedule ?? ((flush) => setImmediate(flush));
  const write = stream.write;
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    write.call(stream, text);
  };
  stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === 'string' && rest.length === 0) {
      if (pending === '') schedule(flush);
      pending += chunk;
      return true;
    }
    flush();
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Write;
  const others = (options.before ?? []).map((other) => {
    const otherWrite = other.write;
    other.write = function (this: NodeJS.WriteStream, ...args: unknown[]) {
      flush();
      return (otherWrite as (...args: unknown[]) => boolean).apply(this, args);
    } as Write;
    return () => { other.write = otherWrite; };
  });
  process.on('exit', flush);
  return () => {
    flush();
    process.removeListener('exit', flush);
    stream.write = write;
    for (const restore of others) restore();
  };
}
