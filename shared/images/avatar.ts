import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/** Side of a generated avatar, in pixels. */
export const AVATAR_SIZE = 120;
const GRID = 5;
const CELL = 20;
const MARGIN = (AVATAR_SIZE - GRID * CELL) / 2;
const BACKGROUND = [0xf0, 0xf2, 0xf8] as const;

/**
 * The default avatar of a user id: a 5×5 mirrored pattern in one colour (an "identicon", as GitHub
 * draws for accounts without a picture), as a PNG. It is derived from the id alone, so it reveals
 * nothing about the user, needs no stored data, and is the same on every call.
 */
export function defaultAvatarPng(id: string): Buffer {
  const hash = createHash('sha256').update(id).digest();
  const on = (row: number, column: number) => {
    const mirrored = column < 3 ? column : GRID - 1 - column;
    const bit = row * 3 + mirrored; // 15 bits: the left half and the middle column
    return ((hash[Math.floor(bit / 8)]! >> (bit % 8)) & 1) === 1;
  };
  const colour = hslToRgb(((hash[2]! << 8) | hash[3]!) % 360, 0.55, 0.42);
  const rows: Buffer[] = [];
  for (let y = 0; y < AVATAR_SIZE; y++) {
    const row = Buffer.alloc(1 + AVATAR_SIZE); // filter byte 0, then one palette index per pixel
    for (let x = 0; x < AVATAR_SIZE; x++) {
      const [gx, gy] = [Math.floor((x - MARGIN) / CELL), Math.floor((y - MARGIN) / CELL)];
      const inside = x >= MARGIN && y >= MARGIN && gx < GRID && gy < GRID;
      row[1 + x] = inside && on(gy, gx) ? 1 : 0;
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(AVATAR_SIZE, 0);
  header.writeUInt32BE(AVATAR_SIZE, 4);
  header.set([8, 3, 0, 0, 0], 8); // 8-bit palette indices, deflate, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('PLTE', Buffer.from([...BACKGROUND, ...colour])),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

function hslToRgb(hue: number, saturation: number, lightness: number): [number, number, number] {
  const a = saturation * Math.min(lightness, 1 - lightness);
  const f = (n: number) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}
