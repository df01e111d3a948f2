import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { serviceFacts } from '#local/service';
import { serialKey } from '#shared/data/item-keys';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';

// `npm run admin -- allow-serials`: the operator lists a batch's serial numbers for fleet provisioning.

describe('npm run admin -- allow-serials', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  let stateDir: string;
  let local: Record<string, string>;

  beforeAll(() => {
    stateDir = dirname(service.signingKeyFile);
    local = { STATE_DIR: stateDir, TABLE_NAME: '' };
    writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
  });
  const stored = async (serial: string) => (await doc.send(new GetCommand({ TableName: service.tableName, Key: serialKey(serial), ConsistentRead: true }))).Item;
  /** A serials file in the service's state folder (removed with it). */
  function file(lines: string[]) {
    const path = join(stateDir, `serials-${randomUUID()}.txt`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  }

  it('lists each serial with a new device id, skipping blank lines and comments, and keeps a serial listed before as it was', async () => {
    const [a, b] = [`SN-${randomUUID()}`, `SN-${randomUUID()}`];
    const first = await runTool('local/admin.ts', ['allow-serials', '--file', file(['# batch 7', a, '', b])], local);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const printed = first.stdout.trim().split('\n').map((line) => JSON.parse(line) as { serial: string; device: string });
    expect(printed.map((p) => p.serial)).toEqual([a, b]);
    for (const { serial, device } of printed) expect(await stored(serial)).toMatchObject({ deviceId: device });

    const again = await runTool('local/admin.ts', ['allow-serials', '--file', file([a])], local);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ serial: a, alreadyListed: true });
    expect(await stored(a)).toMatchObject({ deviceId: printed[0]!.device });
  }, 60_000);

  it('lists nothing from a file with a line that is not a serial, or a serial twice', async () => {
    const good = `SN-${randomUUID()}`;
    const bad = await runTool('local/admin.ts', ['allow-serials', '--file', file([good, 'SN 42; rm -rf'])], local);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('"SN 42; rm -rf"');
    const twice = await runTool('local/admin.ts', ['allow-serials', '--file', file([good, good])], local);
    expect(twice.code).toBe(2);
    expect(twice.stderr.trim()).toBe(`Listed twice in the file: ${good}.`);
    expect(await stored(good)).toBeUndefined();
  }, 60_000);
});
