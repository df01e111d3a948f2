import { describe, expect, it } from 'vitest';
import { batchWrites } from '#local/output';

/** A stand-in for stdout or stderr that records each write it receives (one system call each). */
function recordingStream(name: string, log: string[]) {
  return { write: (chunk: unknown, ...rest: unknown[]) => { log.push(`${name}:${String(chunk)}`); (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.(); return true; } } as unknown as NodeJS.WriteStream;
}

/** stdout and stderr stand-ins that record their writes in one log, in the order received. */
function recordingStreams() {
  const log: string[] = [];
  return { log, out: recordingStream('out', log), err: recordingStream('err', log) };
}

describe('npm start\'s batched output', () => {
  it('sends the lines of one turn in one write, in order, when the turn ends', () => {
    const { log, out } = recordingStreams();
    let flush: (() => void) | undefined;
    const undo = batchWrites(out, { schedule: (f) => { flush = f; } });
    out.write('a\n');
    out.write('b\n');
    expect(log).toEqual([]);
    flush!();
    out.write('c\n');
    flush!();
    expect(log).toEqual(['out:a\nb\n', 'out:c\n']);
    undo();
  });

  it('lets no line overtake another: a write to stderr, with a callback, or of bytes sends what waits first', () => {
    const { log, out, err } = recordingStreams();
    const undo = batchWrites(out, { before: [err], schedule: () => undefined });
    out.write('1\n');
    err.write('warning\n');
    out.write('2\n');
    let called = false;
    out.write('3\n', () => { called = true; });
    out.write('4\n');
    out.write(Buffer.from('5\n'));
    expect(log).toEqual(['out:1\n', 'err:warning\n', 'out:2\n', 'out:3\n', 'out:4\n', 'out:5\n']);
    expect(called).toBe(true);
    undo();
  });

  it('sends what waits when undone (and when the process exits), and writes directly afterwards', () => {
    const { log, out, err } = recordingStreams();
    const undo = batchWrites(out, { before: [err], schedule: () => undefined });
    out.write('last\n');
    const exitListeners = process.listenerCount('exit');
    undo();
    expect(process.listenerCount('exit')).toBe(exitListeners - 1);
    out.write('after\n');
    err.write('e\n');
    expect(log).toEqual(['out:last\n', 'out:after\n', 'err:e\n']);
  });

  it('batches with setImmediate by default', async () => {
    const { log, out } = recordingStreams();
    const undo = batchWrites(out);
    out.write('x\n');
    out.write('y\n');
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['out:x\ny\n']);
    undo();
  });
});
