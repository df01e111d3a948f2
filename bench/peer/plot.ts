import { percentile } from '../stats.ts';
import type { PeerComparison } from './compare.ts';

// The latency distributions of ours and the peer as an SVG, drawn from the measured calls: one panel
// per grant and concurrency, each the empirical cumulative distribution of the two servers (the share
// of calls answered within x milliseconds), x up to the larger p99.5 so that the tail stays readable.

const COLORS = { ours: '#1f77b4', peer: '#d62728' } as const;
const PANEL = { width: 420, height: 240, left: 56, right: 16, top: 40, bottom: 44 } as const;

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A round step for axis ticks: 1, 2 or 5 × a power of ten, giving about `count` ticks. */
function tickStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
}

/** The SVG document; `title` names the run (mode, date, machine). */
export function latencyPlot(comparison: PeerComparison, title: string): string {
  const grants = [...new Set(comparison.samples.map((s) => s.grant))];
  const levels = [...new Set(comparison.samples.map((s) => s.concurrency))];
  const width = PANEL.width * levels.length;
  const height = PANEL.height * grants.length + 56;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="13" font-weight="bold">${esc(`Token endpoint latency, ours vs ${comparison.package} ${comparison.version}`)}</text>`,
    `<text x="${width / 2}" y="34" text-anchor="middle" fill="#555">${esc(title)}</text>`,
  ];
  comparison.samples.forEach((sample) => {
    const col = levels.indexOf(sample.concurrency);
    const row = grants.indexOf(sample.grant);
    const x0 = col * PANEL.width + PANEL.left;
    const y0 = 40 + row * PANEL.height + PANEL.top;
    const w = PANEL.width - PANEL.left - PANEL.right;
    const h = PANEL.height - PANEL.top - PANEL.bottom;
    const xMax = Math.max(percentile(sample.ours, 99.5), percentile(sample.peer, 99.5)) * 1.05;
    const sx = (ms: number) => x0 + (Math.min(ms, xMax) / xMax) * w;
    const sy = (share: number) => y0 + h - share * h;
    const scenario = comparison.scenarios.find((s) => s.grant === sample.grant && s.concurrency === sample.concurrency);
    parts.push(`<text x="${x0 + w / 2}" y="${y0 - 8}" text-anchor="middle" font-weight="bold">${esc(`${sample.grant}, ${sample.concurrency} concurrent clients`)}</text>`);
    // Axes and grid.
    const step = tickStep(xMax, 5);
    for (let t = 0; t <= xMax; t += step) {
      parts.push(`<line x1="${sx(t).toFixed(1)}" y1="${y0}" x2="${sx(t).toFixed(1)}" y2="${y0 + h}" stroke="#eee"/>`,
        `<text x="${sx(t).toFixed(1)}" y="${y0 + h + 14}" text-anchor="middle">${Number(t.toPrecision(3))}</text>`);
    }
    for (const share of [0, 0.25, 0.5, 0.75, 0.9, 0.99, 1]) {
      parts.push(`<line x1="${x0}" y1="${sy(share).toFixed(1)}" x2="${x0 + w}" y2="${sy(share).toFixed(1)}" stroke="${share === 0.5 || share === 0.99 ? '#ccc' : '#f2f2f2'}"/>`);
      if (share !== 0.99 && share !== 0.9) parts.push(`<text x="${x0 - 6}" y="${(sy(share) + 4).toFixed(1)}" text-anchor="end">${share * 100}%</text>`);
    }
    parts.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="none" stroke="#888"/>`,
      `<text x="${x0 + w / 2}" y="${y0 + h + 30}" text-anchor="middle" fill="#555">milliseconds (share of calls answered within)</text>`);
    // One step curve per server.
    for (const side of ['ours', 'peer'] as const) {
      const sorted = [...sample[side]].sort((a, b) => a - b);
      const points: string[] = [`${sx(0).toFixed(1)},${sy(0).toFixed(1)}`];
      const stride = Math.max(1, Math.floor(sorted.length / 400));
      for (let i = 0; i < sorted.length; i += stride) points.push(`${sx(sorted[i]!).toFixed(1)},${sy((i + 1) / sorted.length).toFixed(1)}`);
      points.push(`${sx(sorted.at(-1)!).toFixed(1)},${sy(1).toFixed(1)}`);
      parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${COLORS[side]}" stroke-width="1.6"/>`);
    }
    if (scenario) {
      const lines = [
        ['ours', `ours ${scenario.ours.requestsPerSecond} req/s, p50 ${scenario.ours.p50Ms.toFixed(1)}, p99 ${scenario.ours.p99Ms.toFixed(1)} ms, ${scenario.ours.dynamodbRequestsPerCall} DDB req`],
        ['peer', `peer ${scenario.peer.requestsPerSecond} req/s, p50 ${scenario.peer.p50Ms.toFixed(1)}, p99 ${scenario.peer.p99Ms.toFixed(1)} ms, ${scenario.peer.dynamodbRequestsPerCall} DDB req`],
      ] as const;
      lines.forEach(([side, text], i) => {
        parts.push(`<text x="${x0 + w - 6}" y="${(sy(0.2) + 14 * i).toFixed(1)}" text-anchor="end" fill="${COLORS[side]}">${esc(text)}</text>`);
      });
    }
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
