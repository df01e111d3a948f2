import type { QRCode } from 'qrcode';
// @ts-expect-error qrcode's encoder alone, without its PNG and terminal renderers (@types/qrcode types the package's entry: QRCode.create)
import { create as createQrCode } from 'qrcode/lib/core/qrcode.js';

// Apart from shared/accounts/totp.ts, so that only the authenticator app's set-up pages carry the
// QR code encoder (about 20 KiB), not the sign-in functions that check codes.

/** The QR code of `text` as an SVG image (a data: URL, which the pages' CSP allows as img-src). */
export function qrCodeDataUrl(text: string): string {
  const qr = (createQrCode as (text: string, options: object) => QRCode)(text, { errorCorrectionLevel: 'M' });
  const size = qr.modules.size;
  const margin = 4;
  let path = '';
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (qr.modules.get(row, col)) path += `M${col + margin} ${row + margin}h1v1h-1z`;
    }
  }
  const side = size + 2 * margin;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges">`
    + `<rect width="${side}" height="${side}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
