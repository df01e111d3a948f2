import { readFileSync } from 'node:fs';
import { BUILTIN_SHIMS } from '#infra/bundling';
import { bundleAll, type BundleResult } from './bundle.ts';
import type { ColdStartResult, ColdStartTarget } from './cold-start.ts';
import { fmt, table } from './report.ts';
import { median, round } from './stats.ts';

// The cold start of the old path, in the same rounds as the new one: every
// bundle takes `http`/`https` through the CommonJS shims of infra/bundling.ts; here the baseline and
// one representative function are also bundled without them (the SDK's ESM imports of `node:http`
// and `node:https` reach Node's ESM facades), and cold-started in the same group as their shimmed
// bundle, together with a bare Node start, so that a busy moment of the machine hits all of them.

/** The bundles measured both ways: the benchmark's reference, and a resource function. */
export const OLD_PATH_SUBJECTS = ['baseline', 'get-user'] as const;
export type OldPathSubject = (typeof OLD_PATH_SUBJECTS)[number];
export const BARE_NODE = 'bare-node';
/** Name of a subject's old-path bundle (also its folder under bench/.out/). */
export const oldPathName = (subject: string) => `${subject}-esm-http`;

/** Bundles the subjects without the shims: `entries` maps each subject to its entry file. */
export function bundleOldPath(entries: Record<OldPathSubject, string>): Promise<Map<string, BundleResult>> {
  return bundleAll(Object.fromEntries(OLD_PATH_SUBJECTS.map((s) => [oldPathName(s), entries[s]])), { withoutShims: true });
}

/**
 * Whether a bundle imports `http` or `https` through an ES module import (the old path), as esbuild
 * writes it: `import x from"node:http"`, `import{request as y}from"https"`, `import("node:http")`.
 */
export function importsHttpAsEsm(code: string): boolean {
  return /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](?:node:)?https?["']/.test(code);
}

/** Whether a (minified) bundle carries the shim modules of infra/bundling.ts: `process.getBuiltinModule("node:http")` for each. */
export function carriesHttpShims(code: string): boolean {
  const modules = new Set(Object.keys(BUILTIN_SHIMS).map((name) => name.replace(/^node:/, '')));
  return [...modules].every((name) => new RegExp(`process\\.getBuiltinModule\\(\\s*["']node:${name}["']\\s*\\)`).test(code));
}

/** Refuses to compare anything but the intended pair: the shimmed bundle without ESM http, the old one with it. */
export function checkOldPathBundles(shimmed: BundleResult, old: BundleResult): void {
  const shimmedCode = readFileSync(shimmed.file, 'utf8');
  const oldCode = readFileSync(old.file, 'utf8');
  if (importsHttpAsEsm(shimmedCode) || !carriesHttpShims(shimmedCode)) throw new Error(`${shimmed.name}: the bundle does not take http/https through the shims`);
  if (!importsHttpAsEsm(oldCode)) throw new Error(`${old.name}: the old-path bundle does not import http/https as ES modules; nothing to compare`);
}

/**
 * The extra cold-start targets: for each subject, its old-path bundle in the subject's group (the
 * same events and environment), and a bare Node start in the baseline's group.
 */
export function oldPathTargets(shimmedTargets: readonly ColdStartTarget[], oldBundles: Map<string, BundleResult>): ColdStartTarget[] {
  const targets: ColdStartTarget[] = [];
  for (const subject of OLD_PATH_SUBJECTS) {
    const shimmed = shimmedTargets.find((t) => t.name === subject);
    if (!shimmed) throw new Error(`no cold-start target ${subject}`);
    targets.push({ ...shimmed, name: oldPathName(subject), group: shimmed.group ?? shimmed.name, bundleFile: oldBundles.get(oldPathName(subject))!.file });
  }
  const baseline = shimmedTargets.find((t) => t.name === 'baseline')!;
  targets.push({ name: BARE_NODE, group: baseline.group ?? baseline.name, bundleFile: '', eventFiles: [''], env: baseline.env, bareNode: true });
  return targets;
}

/** The `httpShim` section of bench-results.json (bench/RESULTS.md). */
export function summarizeOldPath(cold: Map<string, ColdStartResult>, bundles: Map<string, BundleResult>, oldBundles: Map<string, BundleResult>) {
  const bare = cold.get(BARE_NODE)!;
  const part = (c: ColdStartResult, bytes: number) => ({
    bytes, medianMs: round(c.medianMs, 3), medianImportMs: round(c.medianImportMs, 3), medianCpuMs: round(c.medianCpuMs, 3),
    bareRatio: round(c.medianMs / bare.medianMs, 4),
  });
  return {
    shimmed: Object.keys(BUILTIN_SHIMS),
    bareNode: { runs: bare.runs, medianMs: round(bare.medianMs, 3), p10Ms: round(bare.p10Ms, 3), p90Ms: round(bare.p90Ms, 3) },
    subjects: OLD_PATH_SUBJECTS.map((subject) => {
      const shim = cold.get(subject)!;
      const old = cold.get(oldPathName(subject))!;
      return {
        name: subject,
        shim: part(shim, bundles.get(subject)!.bytes),
        old: part(old, oldBundles.get(oldPathName(subject))!.bytes),
        // Paired by round (the two ran back to back): the median of old − shim, and of shim ÷ old.
        savedMs: round(median(old.totalsMs.map((o, i) => o - shim.totalsMs[i]!)), 3),
        savedImportMs: round(old.medianImportMs - shim.medianImportMs, 3),
        savedCpuMs: round(median(old.cpusMs.map((o, i) => o - shim.cpusMs[i]!)), 3),
        ratio: round(median(shim.totalsMs.map((s, i) => s / old.totalsMs[i]!)), 4),
      };
    }),
  };
}

export type OldPathSection = ReturnType<typeof summarizeOldPath>;

export function renderOldPath(section: OldPathSection): string {
  return [
    `http/https through CommonJS shims (${section.shimmed.join(', ')}) against the old path (ESM imports), same rounds; bare Node start ${fmt(section.bareNode.medianMs, 1)} ms:`,
    table(
      ['bundle', 'shim ms', 'old ms', 'saved ms', 'shim ÷ old', 'shim ÷ bare', 'old ÷ bare', 'import shim/old ms', 'CPU saved ms'],
      section.subjects.map((s) => [
        s.name, fmt(s.shim.medianMs, 1), fmt(s.old.medianMs, 1), fmt(s.savedMs, 1), fmt(s.ratio), fmt(s.shim.bareRatio), fmt(s.old.bareRatio),
        `${fmt(s.shim.medianImportMs, 1)} / ${fmt(s.old.medianImportMs, 1)}`, fmt(s.savedCpuMs, 1),
      ]),
    ),
  ].join('\n');
}
