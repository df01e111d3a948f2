import { describe, expect, it } from 'vitest';
import { DEVICE_FIELDS, isDeviceId, parseDeviceChanges, toDevice } from '#shared/domain/device';
import { ValidationError } from '#shared/domain/errors';
import { AppError } from '#shared/errors';
import { makeDevice } from '../support/factories';


/** Runs `act` and returns what it threw; fails the test when it throws nothing. */
function thrownBy(act: () => unknown): unknown {
  try {
    act();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw, but it returned');
}

function expectBadRequestNaming(body: unknown, member: string) {
  const error = thrownBy(() => parseDeviceChanges(body));
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as Error).message).toContain(`'${member}'`);
}

describe('parseDeviceChanges', () => {
  describe('accepts', () => {
    it('an empty object as a no-op', () => {
      // Act
      const changes = parseDeviceChanges({});

      // Assess
      expect(changes).toEqual({});
    });

    it('each writable member alone, returning only that member', () => {
      // Prepare
      const bodies = [{ name: 'Kitchen' }, { place: 'Lyon' }, { active: true }, { active: false }, { sound: true }, { sound: false }];

      // Act
      const results = bodies.map((body) => parseDeviceChanges(body));

      // Assess
      expect(results).toEqual(bodies);
      results.forEach((changes, i) => expect(Object.keys(changes)).toEqual(Object.keys(bodies[i]!)));
    });

    it('all four writable members together', () => {
      // Prepare
      const body = { name: 'Kitchen', place: 'Lyon house', active: true, sound: false };

      // Act
      const changes = parseDeviceChanges(body);

      // Assess
      expect(changes).toEqual(body);
    });

    it.each([
      ['1 character', 'a'],
      ['100 characters', 'x'.repeat(100)],
      ['100 astral code points (200 UTF-16 units)', '🏠'.repeat(100)],
      ['accents and non-Latin scripts', 'Séjour — 客厅'],
      ['a no-break space (U+00A0, just past the C1 range)', 'Living\u00a0room'],
      ['a space', 'Living room'],
    ])('a name or place of %s', (_, text) => {
      // Act
      const changes = parseDeviceChanges({ name: text, place: text });

      // Assess
      expect(changes).toEqual({ name: text, place: text });
    });

    it('a JSON-parsed body', () => {
      // Prepare
      const body: unknown = JSON.parse('{"name":"Garage","sound":false}');

      // Act
      const changes = parseDeviceChanges(body);

      // Assess
      expect(changes).toEqual({ name: 'Garage', sound: false });
    });
  });

  describe('rejects text members', () => {
    it.each(['name', 'place'])('%s: empty', (member) => {
      expectBadRequestNaming({ [member]: '' }, member);
    });

    it.each(['name', 'place'])('%s: 101 characters', (member) => {
      expectBadRequestNaming({ [member]: 'x'.repeat(101) }, member);
    });

    it('name: 101 astral code points, counted as code points not UTF-16 units', () => {
      expectBadRequestNaming({ name: '🏠'.repeat(101) }, 'name');
    });

    it.each([
      ['NUL', '\u0000'],
      ['line feed', '\n'],
      ['carriage return', '\r'],
      ['tab', '\t'],
      ['unit separator U+001F', '\u001f'],
      ['DEL U+007F', '\u007f'],
      ['NEL U+0085 (C1)', '\u0085'],
      ['U+009F (last C1)', '\u009f'],
    ])('a %s control character', (_, control) => {
      expectBadRequestNaming({ name: `Living${control}room` }, 'name');
      expectBadRequestNaming({ place: `${control}Paris` }, 'place');
    });

    it.each([
      ['a lone high surrogate', 'Living\ud800room'],
      ['a lone low surrogate', '\udc00'],
      ['surrogates in the wrong order', '\udc00\ud800'],
    ])('%s (not well-formed Unicode, no UTF-8 form)', (_, text) => {
      expectBadRequestNaming({ name: text }, 'name');
      expectBadRequestNaming({ place: text }, 'place');
    });

    it.each([
      ['a number', 42],
      ['a boolean', true],
      ['an array', ['Kitchen']],
      ['an object', { text: 'Kitchen' }],
      ['null', null],
    ])('%s instead of a string', (_, value) => {
      expectBadRequestNaming({ name: value }, 'name');
      expectBadRequestNaming({ place: value }, 'place');
    });
  });

  describe('rejects boolean members', () => {
    it.each([
      ['a string', 'true'],
      ['a number', 1],
      ['zero', 0],
      ['an array', [true]],
      ['an object', {}],
      ['null', null],
    ])('%s instead of a boolean', (_, value) => {
      expectBadRequestNaming({ active: value }, 'active');
      expectBadRequestNaming({ sound: value }, 'sound');
    });
  });

  describe('rejects read-only members', () => {
    it.each(DEVICE_FIELDS.filter((field) => !['name', 'place', 'active', 'sound'].includes(field)))(
      '%s, even with a value of the right type',
      (member) => {
        // Prepare
        const body = { [member]: makeDevice()[member] };

        // Act
        const error = thrownBy(() => parseDeviceChanges(body));

        // Assess
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as Error).message).toBe(`Member '${member}' is read-only.`);
      },
    );

    it('a read-only member next to valid ones (nothing is partially accepted)', () => {
      expectBadRequestNaming({ name: 'Kitchen', active: true, version: '9.9.9' }, 'version');
    });
  });

  describe('rejects unknown members', () => {
    it.each(['colour', 'Name', 'ACTIVE', 'owner', 'pk', 'toString', ''])('%j', (member) => {
      expectBadRequestNaming({ [member]: 'x' }, member);
    });

    it('an own __proto__ member of a parsed body', () => {
      expectBadRequestNaming(JSON.parse('{"__proto__":{"name":"x"}}'), '__proto__');
    });

    it('a very long member name, quoting only its beginning', () => {
      // Prepare
      const member = `m${'x'.repeat(10_000)}`;

      // Act
      const error = thrownBy(() => parseDeviceChanges({ [member]: true }));

      // Assess
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toContain(member.slice(0, 40));
      expect((error as Error).message.length).toBeLessThan(100);
    });

    it('an unknown member next to valid ones', () => {
      expectBadRequestNaming({ sound: true, volume: 11 }, 'volume');
    });
  });

  describe('rejects a body that is not a JSON object', () => {
    it.each([
      ['null', null],
      ['undefined', undefined],
      ['an array', [{ name: 'Kitchen' }]],
      ['an empty array', []],
      ['a string', '{"name":"Kitchen"}'],
      ['a number', 42],
      ['a boolean', true],
    ])('%s', (_, body) => {
      // Act
      const error = thrownBy(() => parseDeviceChanges(body));

      // Assess
      // A domain error: the http layer, not the domain, decides it is a 400.
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).not.toBeInstanceOf(AppError);
      expect(error).toMatchObject({ message: 'The request body must be a JSON object.' });
    });
  });
});

describe('isDeviceId', () => {
  it.each([
    '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-4fff-bfff-ffffffffffff',
  ])('accepts the UUID %s', (id) => {
    expect(isDeviceId(id)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['a word', 'kitchen'],
    ['no dashes', '0f6b1c2d3e4f4a5b8c6d7e8f9a0b1c2d'],
    ['one character too many', '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2de'],
    ['one character too few', '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2'],
    ['a non-hex digit', '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2g'],
    ['braces', '{0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d}'],
    ['a trailing newline', '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d\n'],
    ['a leading space', ' 0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'],
    ['a key prefix', 'DEVICE#0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'],
    ['a path', '../0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'],
  ])('rejects %s', (_, id) => {
    expect(isDeviceId(id)).toBe(false);
  });
});

describe('toDevice', () => {
  it('keeps exactly the public fields, in the order of docs/api.md#device, dropping key and owner attributes', () => {
    // Prepare
    const device = makeDevice();
    const item = { pk: 'USER#u', sk: `DEVICE#${device.id}`, gsi1pk: `DEVICE#${device.id}`, gsi1sk: 'DEVICE', ownerId: 'u', ...device };

    // Act
    const projected = toDevice(item);

    // Assess
    expect(Object.keys(projected)).toEqual([...DEVICE_FIELDS]);
    expect(projected).toEqual(device);
  });

  it('keeps the values and types as stored', () => {
    // Prepare
    const device = makeDevice({ active: true, connected: false, sound: false, latitude: -33.8688, longitude: 151.2093 });

    // Act
    const projected = toDevice({ ...device, passwordHash: 'never' });

    // Assess
    expect(projected).toStrictEqual(device);
  });
});
