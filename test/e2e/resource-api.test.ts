import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { DEVICE_FIELDS, type Device } from '#shared/domain/device';
import { USER_FIELDS, type User } from '#shared/domain/user';
import { countRequests } from '../support/count-requests';
import { tokenFor, useTable, useTestService } from '../support/service';
import { makeDevice, userNamed } from '../support/factories';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/;
const ALL = ['read_user', 'read_device', 'write_device'];
const [ALICE, BOB] = DEMO_USERS;
const ALICE_DEVICE = ALICE.devices[0].id;
const BOB_DEVICE = BOB.devices[0].id;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

interface CallOptions {
  token?: string;
  body?: string;
  /** Defaults to application/json when there is a body; null sends none. */
  contentType?: string | null;
  headers?: Record<string, string>;
}

describe('resource API', () => {
  const service = useTestService();
  const { doc: seedDoc } = useTable(service);
  let requests: ReturnType<typeof countRequests>;
  let aliceToken: string;
  let bobToken: string;

  beforeAll(async () => {
    // The handlers' own client: imported after the service set the environment they read.
    const { doc } = await import('#shared/runtime');
    requests = countRequests(doc, { api: 'resource' });
    aliceToken = await tokenFor(service, ALICE.user.id, ALL);
    bobToken = await tokenFor(service, BOB.user.id, ALL);
  });
  afterAll(() => requests?.detach());
  beforeEach(() => requests.reset());

  async function call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const contentType = options.contentType === undefined && options.body !== undefined ? 'application/json' : options.contentType;
    if (contentType) headers['content-type'] = contentType;
    const response = await fetch(`${service.apiUrl}${path}`, { method, headers, body: options.body });
    const text = await response.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  /** A new user with their own devices, stored through the data layer like the operators' tool does. */
  async function provisionUser(...devices: Device[]) {
    const user = userNamed('Carol', 'Petit', { email_confirmed: false });
    await createUserRepo({ doc: seedDoc, table: service.tableName }).createUser(user, 'not-a-real-hash');
    const repo = createDeviceRepo({ doc: seedDoc, table: service.tableName });
    for (const device of devices) await repo.createDevice(user.id, device);
    return { user, devices, token: await tokenFor(service, user.id, ALL) };
  }

  async function readDevice(token: string, id: string): Promise<Device> {
    const reply = await call('GET', `/devices/${id}`, { token });
    expect(reply.status).toBe(200);
    requests.reset();
    return (reply.json as Device[])[0]!;
  }

  function expectEnvelope(reply: Reply, status: number, code: string) {
    expect(reply.status).toBe(status);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.json).toEqual({ error: code, error_description: expect.any(String) });
    return reply.json as { error: string; error_description: string };
  }

  function expectDeviceShape(device: Record<string, unknown>) {
    expect(Object.keys(device)).toEqual([...DEVICE_FIELDS]);
    expect(device).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: expect.any(String),
      place: expect.any(String),
      version: expect.stringMatching(/^\d+(\.\d+)*$/),
      last_connection: expect.stringMatching(TIMESTAMP),
      active: expect.any(Boolean),
      connected: expect.any(Boolean),
      reference: expect.stringMatching(/^[0-9a-f]+$/i),
      latitude: expect.any(Number),
      longitude: expect.any(Number),
      sound: expect.any(Boolean),
    });
  }

  describe('GET /user', () => {
    it('returns the caller profile with exactly the fields and types of docs/api.md#user, in one GetItem', async () => {
      // Act
      const reply = await call('GET', '/user', { token: aliceToken });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      const user = reply.json as Record<string, unknown>;
      expect(Object.keys(user).sort()).toEqual([...USER_FIELDS].sort());
      expect(user).toEqual({
        ...ALICE.user,
        creation_date: expect.stringMatching(TIMESTAMP),
        update_date: expect.stringMatching(TIMESTAMP),
      });
      expect(typeof user.gender).toBe('number');
      expect(typeof user.email_confirmed).toBe('boolean');
      expect(requests.operations).toEqual(['GetItemCommand']);
    });

    it('never leaks the password hash or storage attributes', async () => {
      // Act
      const reply = await call('GET', '/user', { token: bobToken });

      // Assess
      expect(reply.status).toBe(200);
      expect((reply.json as User).id).toBe(BOB.user.id);
      for (const leak of ['passwordHash', 'scrypt', '"pk"', '"sk"', 'gsi1', 'USER#', 'EMAIL#']) {
        expect(reply.text).not.toContain(leak);
      }
    });

    it('returns the stored values of a provisioned user exactly', async () => {
      // Prepare
      const { user, token } = await provisionUser();
      requests.reset();

      // Act
      const reply = await call('GET', '/user', { token });

      // Assess
      expect(reply.json).toStrictEqual(user);
      expect(requests.total).toBe(1);
    });

    it('answers 404 not_found when the token names a user that does not exist, in one GetItem', async () => {
      // Prepare
      const token = await tokenFor(service, randomUUID(), ['read_user']);

      // Act
      const reply = await call('GET', '/user', { token });

      // Assess
      expectEnvelope(reply, 404, 'not_found');
      expect(requests.operations).toEqual(['GetItemCommand']);
    });
  });

  describe('GET /devices', () => {
    it("returns only the caller's devices with exactly the fields of docs/api.md#device, in one Query", async () => {
      // Act
      const reply = await call('GET', '/devices', { token: aliceToken });

      // Assess
      expect(reply.status).toBe(200);
      const devices = reply.json as Record<string, unknown>[];
      expect(devices.map((d) => d.id).sort()).toEqual(ALICE.devices.map((d) => d.id).sort());
      devices.forEach(expectDeviceShape);
      expect(requests.operations).toEqual(['QueryCommand']);
    });

    it('returns the stored devices of a provisioned user exactly, and no one else\'s', async () => {
      // Prepare
      const { devices, token } = await provisionUser(makeDevice(), makeDevice({ name: 'Cellar', active: true, sound: false }));
      requests.reset();

      // Act
      const reply = await call('GET', '/devices', { token });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual([...devices].sort((a, b) => (a.id < b.id ? -1 : 1)));
      expect(requests.total).toBe(1);
    });

    it('returns an empty array to a user without devices, in one Query', async () => {
      // Prepare
      const { token } = await provisionUser();
      requests.reset();

      // Act
      const reply = await call('GET', '/devices', { token });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual([]);
      expect(requests.operations).toEqual(['QueryCommand']);
    });
  });

  describe('GET /devices/{device_id}', () => {
    it('returns an array holding the one owned device, in one BatchGetItem (the device and the consent of the application, for its device choice)', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice(), makeDevice());
      requests.reset();

      // Act
      const reply = await call('GET', `/devices/${device!.id}`, { token });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.json).toStrictEqual([device]);
      expectDeviceShape((reply.json as Record<string, unknown>[])[0]!);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it("answers another user's device with a 404 identical to a nonexistent one", async () => {
      // Act
      const theirs = await call('GET', `/devices/${BOB_DEVICE}`, { token: aliceToken });
      const theirsRequests = requests.total;
      requests.reset();
      const missing = await call('GET', `/devices/${randomUUID()}`, { token: aliceToken });

      // Assess
      expectEnvelope(theirs, 404, 'not_found');
      expect(missing.status).toBe(404);
      expect(theirs.text).toBe(missing.text);
      expect(theirs.headers.get('content-type')).toBe(missing.headers.get('content-type'));
      expect(theirsRequests).toBe(1);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('finds a device whatever the letter case of its id', async () => {
      // Act
      const reply = await call('GET', `/devices/${'0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'.toUpperCase()}`, { token: aliceToken });

      // Assess
      expect(reply.status).toBe(200);
      expect((reply.json as { id: string }[])[0]!.id).toBe('0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d');
    });

    it.each([
      ['a word', 'kitchen'],
      ['a number', '12345'],
      ['a UUID with a suffix', `${'0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'}x`],
      ['a UUID without dashes', '0f6b1c2d3e4f4a5b8c6d7e8f9a0b1c2d'],
      ['an encoded key prefix', encodeURIComponent(`DEVICE#${'0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'}`)],
      ['a broken percent-encoding', '%ZZ'],
    ])('answers 404 not_found for a malformed device_id (%s) without touching storage', async (_, id) => {
      // Act
      const reply = await call('GET', `/devices/${id}`, { token: aliceToken });

      // Assess
      expectEnvelope(reply, 404, 'not_found');
      expect(requests.total).toBe(0);
    });
  });

  describe('PUT /devices/{device_id}', () => {
    it('answers 204 with an empty body and changes only the members present, in one request (a transaction: the device choice of the consent checked, the device updated)', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice({ name: 'Attic', active: false }));
      requests.reset();

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: JSON.stringify({ active: true }) });

      // Assess
      expect(reply.status).toBe(204);
      expect(reply.text).toBe('');
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await readDevice(token, device!.id)).toStrictEqual({ ...device, active: true });
    });

    it('changes all four writable members together', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice({ active: true, sound: true }));
      const changes = { name: 'Wine cellar', place: 'Nantes house', active: false, sound: false };

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: JSON.stringify(changes) });

      // Assess
      expect(reply.status).toBe(204);
      expect(await readDevice(token, device!.id)).toStrictEqual({ ...device, ...changes });
    });

    it('leaves the other devices of the owner untouched', async () => {
      // Prepare
      const { devices: [target, other], token } = await provisionUser(makeDevice(), makeDevice({ name: 'Other' }));

      // Act
      await call('PUT', `/devices/${target!.id}`, { token, body: '{"name":"Renamed"}' });

      // Assess
      expect(await readDevice(token, other!.id)).toStrictEqual(other);
    });

    it('accepts {} as a no-op (204), in one BatchGetItem', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice());
      requests.reset();

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: '{}' });

      // Assess
      expect(reply.status).toBe(204);
      expect(reply.text).toBe('');
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(await readDevice(token, device!.id)).toStrictEqual(device);
    });

    it('accepts application/json; charset=utf-8', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice({ sound: true }));

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, {
        token, body: '{"sound":false}', contentType: 'application/json; charset=utf-8',
      });

      // Assess
      expect(reply.status).toBe(204);
      expect((await readDevice(token, device!.id)).sound).toBe(false);
    });

    it('stores non-ASCII text as sent', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice());
      const name = 'Séjour 客厅 🏠';

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: JSON.stringify({ name }) });

      // Assess
      expect(reply.status).toBe(204);
      expect((await readDevice(token, device!.id)).name).toBe(name);
    });

    it.each([
      ['read-only id', { id: '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d' }, 'id'],
      ['read-only version', { version: '9.9.9' }, 'version'],
      ['read-only connected', { connected: false }, 'connected'],
      ['read-only last_connection', { last_connection: '2030-01-01T00:00:00.000' }, 'last_connection'],
      ['read-only latitude', { latitude: 0 }, 'latitude'],
      ['unknown member', { colour: 'red' }, 'colour'],
      ['wrong type (name)', { name: 42 }, 'name'],
      ['wrong type (active)', { active: 'true' }, 'active'],
      ['null (name)', { name: null }, 'name'],
      ['null (sound)', { sound: null }, 'sound'],
      ['empty name', { name: '' }, 'name'],
      ['101-character place', { place: 'p'.repeat(101) }, 'place'],
      ['control character', { name: 'Attic\nroom' }, 'name'],
      ['lone surrogate', { name: 'Attic\ud800' }, 'name'],
      ['valid members next to a read-only one', { name: 'Sneaky', active: true, reference: 'ffff' }, 'reference'],
    ])('answers 400 for a %s, naming the member, and writes nothing', async (_, body, member) => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice({ name: 'Attic', active: false }));
      requests.reset();

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: JSON.stringify(body) });

      // Assess
      const envelope = expectEnvelope(reply, 400, 'invalid_request');
      expect(envelope.error_description).toContain(`'${member}'`);
      expect(requests.total).toBe(0);
      expect(await readDevice(token, device!.id)).toStrictEqual(device);
    });

    it.each([
      ['an array', '[{"name":"x"}]'],
      ['a string', '"name"'],
      ['null', 'null'],
      ['a number', '42'],
      ['malformed JSON', '{"name":"x"'],
      ['an empty body', ''],
    ])('answers 400 for %s as body and writes nothing', async (_, body) => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice());
      requests.reset();

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body, contentType: 'application/json' });

      // Assess
      expectEnvelope(reply, 400, 'invalid_request');
      expect(requests.total).toBe(0);
      expect(await readDevice(token, device!.id)).toStrictEqual(device);
    });

    it("answers another user's device with a 404 identical to a nonexistent one, and leaves it unchanged", async () => {
      // Prepare
      const before = await readDevice(bobToken, BOB_DEVICE);
      const body = JSON.stringify({ name: 'Taken over', active: !before.active });

      // Act
      const theirs = await call('PUT', `/devices/${BOB_DEVICE}`, { token: aliceToken, body });
      const theirsRequests = [...requests.operations];
      const missing = await call('PUT', `/devices/${randomUUID()}`, { token: aliceToken, body });

      // Assess
      expectEnvelope(theirs, 404, 'not_found');
      expect(theirs.text).toBe(missing.text);
      expect(missing.status).toBe(404);
      expect(theirsRequests).toEqual(['TransactWriteItemsCommand']);
      expect(await readDevice(bobToken, BOB_DEVICE)).toStrictEqual(before);
    });

    it("answers {} on another user's device with 404, in one BatchGetItem", async () => {
      // Act
      const reply = await call('PUT', `/devices/${BOB_DEVICE}`, { token: aliceToken, body: '{}' });

      // Assess
      expectEnvelope(reply, 404, 'not_found');
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('answers 404 for a nonexistent device and does not create it', async () => {
      // Prepare
      const id = randomUUID();

      // Act
      const reply = await call('PUT', `/devices/${id}`, { token: aliceToken, body: '{"name":"Ghost"}' });

      // Assess
      expectEnvelope(reply, 404, 'not_found');
      expect((await call('GET', `/devices/${id}`, { token: aliceToken })).status).toBe(404);
    });

    it('answers 404 for a malformed device_id without touching storage', async () => {
      // Act
      const reply = await call('PUT', '/devices/not-a-device', { token: aliceToken, body: '{"name":"x"}' });

      // Assess
      expectEnvelope(reply, 404, 'not_found');
      expect(requests.total).toBe(0);
    });

    it('answers 413 for a body over 16 KiB and writes nothing', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice());
      requests.reset();

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: JSON.stringify({ name: 'x'.repeat(16 * 1024) }) });

      // Assess
      expectEnvelope(reply, 413, 'invalid_request');
      expect(requests.total).toBe(0);
      expect(await readDevice(token, device!.id)).toStrictEqual(device);
    });

    it.each([
      ['no content-type', null],
      ['text/plain', 'text/plain'],
      ['form encoding', 'application/x-www-form-urlencoded'],
    ])('answers 415 for %s and writes nothing', async (_, contentType) => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice({ sound: true }));
      requests.reset();

      // Act
      const reply = await call('PUT', `/devices/${device!.id}`, { token, body: '{"sound":false}', contentType });

      // Assess
      expectEnvelope(reply, 415, 'invalid_request');
      expect(requests.total).toBe(0);
      expect(await readDevice(token, device!.id)).toStrictEqual(device);
    });
  });

  describe('unmatched requests', () => {
    it.each([
      ['POST', '/devices', 'GET'],
      ['DELETE', `/devices/${ALICE_DEVICE}`, 'GET, PUT'],
      ['PATCH', `/devices/${ALICE_DEVICE}`, 'GET, PUT'],
      ['PUT', '/user', 'GET'],
      ['DELETE', '/user', 'GET'],
      ['PUT', '/devices', 'GET'],
      ['POST', '/api/devices', 'GET'],
      ['DELETE', `/api/devices/${ALICE_DEVICE}`, 'GET, PUT'],
    ])('%s %s answers 405 with Allow: %s', async (method, path, allow) => {
      // Act
      const reply = await call(method, path, { token: aliceToken, body: method === 'DELETE' ? undefined : '{}' });

      // Assess
      expectEnvelope(reply, 405, 'method_not_allowed');
      expect(reply.headers.get('allow')).toBe(allow);
      expect(requests.total).toBe(0);
    });

    it('405 leaves the device unchanged', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice());

      // Act
      await call('POST', `/devices/${device!.id}`, { token, body: '{"name":"Posted"}' });

      // Assess
      expect(await readDevice(token, device!.id)).toStrictEqual(device);
    });

    it.each(['/', '/nope', '/users', '/device', '/devices/', `/devices/${ALICE_DEVICE}/extra`, '/api', '/api/', '/api/nope', '/api/api/user', '/USER'])(
      'GET %s answers a JSON 404',
      async (path) => {
        // Act
        const reply = await call('GET', path, { token: aliceToken });

        // Assess
        expectEnvelope(reply, 404, 'not_found');
        expect(requests.total).toBe(0);
      },
    );
  });

  describe('GET /avatars/{file}', () => {
    const png = async (path: string) => {
      const response = await fetch(`${service.apiUrl}${path}`);
      return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
    };

    it("answers a user's avatar_url with a generated PNG, without a token and without touching storage", async () => {
      // Act
      const profile = (await call('GET', '/user', { token: aliceToken })).json as User;
      requests.reset();
      const first = await png(profile.avatar_url);
      const again = await png(profile.avatar_url);
      const other = await png(`/avatars/${BOB.user.id}.png`);

      // Assess
      expect(profile.avatar_url).toBe(`/avatars/${ALICE.user.id}.png`);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('image/png');
      expect(first.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(first.bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect([first.bytes.readUInt32BE(16), first.bytes.readUInt32BE(20)]).toEqual([120, 120]); // IHDR width, height
      expect(again.bytes).toEqual(first.bytes); // the same image for the same id
      expect(other.bytes).not.toEqual(first.bytes);
      expect(requests.total).toBe(0);
    });

    it.each(['/avatars/nope', '/avatars/x.svg', '/avatars/..png', '/api/avatars/x.png'])('answers %s with a JSON 404', async (path) => {
      expectEnvelope(await call('GET', path), 404, 'not_found');
    });
  });

  describe('unmatched requests on each host, by Accept', () => {
    const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
    const request = async (base: string, method: string, path: string, accept?: string) => {
      const response = await fetch(`${base}${path}`, { method, headers: accept ? { accept } : {} });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };

    it.each([
      ['a browser', 'HTML', BROWSER_ACCEPT],
      ['an API client asking for JSON', 'JSON', 'application/json'],
      ['curl (*/*)', 'JSON', '*/*'],
      ['a client without Accept', 'JSON', undefined],
      ['a client preferring JSON', 'JSON', 'application/json, text/html;q=0.5'],
    ])('the auth host answers an unknown path to %s with the %s 404', async (_, kind, accept) => {
      // Act
      const reply = await request(service.authUrl, 'GET', '/no-such-page', accept);

      // Assess
      expect(reply.status).toBe(404);
      expect(reply.headers.get('vary')).toBe('accept');
      if (kind === 'HTML') {
        expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(reply.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-/);
        expect(reply.text).toContain('<p class="status">Error 404</p><h1>Page not found</h1>');
        expect(reply.text).toContain('<a class="button" href="/">Go to the home page</a>');
      } else {
        expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
        expect(JSON.parse(reply.text)).toEqual({ error: 'not_found', error_description: expect.any(String) });
      }
    });

    it('the auth host answers another method on a page with a 405 and Allow, as a page to a browser and JSON to others', async () => {
      // Act
      const page = await request(service.authUrl, 'DELETE', '/login', BROWSER_ACCEPT);
      const api = await request(service.authUrl, 'DELETE', '/login', 'application/json');

      // Assess
      expect([page.status, api.status]).toEqual([405, 405]);
      expect([page.headers.get('allow'), api.headers.get('allow')]).toEqual(['GET, POST', 'GET, POST']);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<h1>Not available this way</h1>');
      expect(JSON.parse(api.text)).toEqual({ error: 'method_not_allowed', error_description: expect.any(String) });
    });

    it.each([['GET', '/nope'], ['DELETE', '/user']])('the resource API answers %s %s with JSON even to a browser', async (method, path) => {
      // Act
      const reply = await request(service.apiUrl, method, path, BROWSER_ACCEPT);

      // Assess
      expect(reply.status).toBe(method === 'GET' ? 404 : 405);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('vary')).toBeNull();
    });
  });

  describe('the /api prefix', () => {
    it.each([
      ['/user'],
      ['/devices'],
      [`/devices/${ALICE_DEVICE}`],
      [`/devices/${BOB_DEVICE}`],
      ['/devices/malformed'],
    ])('GET /api%s answers exactly like GET %s', async (path) => {
      // Act
      const bare = await call('GET', path, { token: aliceToken });
      const prefixed = await call('GET', `/api${path}`, { token: aliceToken });

      // Assess
      expect(prefixed.status).toBe(bare.status);
      expect(prefixed.text).toBe(bare.text);
      expect(prefixed.headers.get('content-type')).toBe(bare.headers.get('content-type'));
    });

    it('PUT /api/devices/{device_id} changes the device like the bare route, in one transaction', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice({ place: 'Nantes' }));
      requests.reset();

      // Act
      const reply = await call('PUT', `/api/devices/${device!.id}`, { token, body: '{"place":"Angers"}' });

      // Assess
      expect(reply.status).toBe(204);
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await readDevice(token, device!.id)).toStrictEqual({ ...device, place: 'Angers' });
    });

    it('PUT /api/devices/{device_id} rejects a read-only member like the bare route', async () => {
      // Prepare
      const { devices: [device], token } = await provisionUser(makeDevice());

      // Act
      const bare = await call('PUT', `/devices/${device!.id}`, { token, body: '{"connected":false}' });
      const prefixed = await call('PUT', `/api/devices/${device!.id}`, { token, body: '{"connected":false}' });

      // Assess
      expect(prefixed.status).toBe(400);
      expect(prefixed.text).toBe(bare.text);
    });
  });

  describe('CORS', () => {
    it('answers a preflight with the allowed methods and headers, without a token', async () => {
      // Act
      const reply = await call('OPTIONS', `/devices/${ALICE_DEVICE}`, {
        headers: {
          origin: 'https://app.example.org',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'authorization, content-type',
        },
      });

      // Assess
      expect(reply.status).toBeLessThan(300);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('access-control-allow-methods')?.split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'PUT']));
      expect(reply.headers.get('access-control-allow-headers')?.split(/,\s*/)).toEqual(
        expect.arrayContaining(['authorization', 'content-type']),
      );
      expect(Number(reply.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(requests.total).toBe(0);
    });

    it('answers a preflight under /api too', async () => {
      // Act
      const reply = await call('OPTIONS', '/api/user', {
        headers: { origin: 'https://app.example.org', 'access-control-request-method': 'GET' },
      });

      // Assess
      expect(reply.status).toBeLessThan(300);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    });

    it.each([
      ['a 200', 'GET', '/devices', true, 200],
      ['a 204', 'PUT', `/devices/${ALICE_DEVICE}`, true, 204],
      ['a 401', 'GET', '/devices', false, 401],
      ['a 404', 'GET', `/devices/${BOB_DEVICE}`, true, 404],
      ['a 405', 'POST', '/devices', true, 405],
    ])('puts access-control-allow-origin on %s when Origin is sent', async (_, method, path, withToken, status) => {
      // Act
      const reply = await call(method, path, {
        token: withToken ? aliceToken : undefined,
        body: method === 'GET' ? undefined : '{}',
        headers: { origin: 'https://app.example.org' },
      });

      // Assess
      expect(reply.status).toBe(status);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('exposes www-authenticate, retry-after and allow to browsers', async () => {
      // Act
      const reply = await call('GET', '/user', { headers: { origin: 'https://app.example.org' } });

      // Assess
      expect(reply.headers.get('access-control-expose-headers')?.split(/,\s*/)).toEqual(
        expect.arrayContaining(['www-authenticate', 'retry-after', 'allow']),
      );
    });
  });

  describe('response headers', () => {
    it.each([
      ['a 200', 'GET', '/devices', 200],
      ['a 404', 'GET', '/nope', 404],
      ['a 405', 'POST', '/devices', 405],
    ])('carry the security headers on %s', async (_, method, path, status) => {
      // Act
      const reply = await call(method, path, { token: aliceToken, body: method === 'GET' ? undefined : '{}' });

      // Assess
      expect(reply.status).toBe(status);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      expect(reply.headers.get('x-frame-options')).toBe('DENY');
      expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    });
  });
});
