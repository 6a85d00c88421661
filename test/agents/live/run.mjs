// The live agent suite, as scripts/test.mjs runs it: the pinned real CLIs (installed by install.mjs), the project's
// fake model servers, and caesar itself, all inside ONE loopback-only network namespace, so no traffic can leave
// 127.0.0.1. When it cannot run here it says "NOT RUN: <reason>" and exits 77 (test/support/not-run.mjs; under CI, 1).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PINNED, binaryOf, cacheRoot, doneMarker } from './agents.mjs';
import { mochaHonestyFlags, refuseNarrowingUnderCi } from '../../support/ci-guard.mjs';
import { ensureFreshDist } from '../../support/dist-freshness.mjs';
import { missingPackageReason, suiteNotRun } from '../../support/not-run.mjs';
const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..', '..');

// CAESAR_LIVE_AGENTS (acp.live.ts) and file names as arguments run part of the suite, and CAESAR_SANDBOX=off leaves its
// confinement checks out (test/support/needs.ts, expectConfined): all refused under CI.
const sandboxOff = { name: 'CAESAR_SANDBOX', allowed: (value) => value !== 'off' };
refuseNarrowingUnderCi(['CAESAR_LIVE_AGENTS', sandboxOff], { args: process.argv.slice(2), argsWhat: 'test/agents/live/run.mjs' });
const skip = suiteNotRun;

const missing = PINNED.filter((e) => !existsSync(doneMarker(e)) || (binaryOf(e) && !existsSync(binaryOf(e)))).map((e) => `${e.pkg}@${e.version}`);
if (missing.length) skip(`agent CLIs not installed in ${cacheRoot()}/agents: ${missing.join(', ')} (run: node test/agents/live/install.mjs)`);
// The suite runs dist/caesar.js: built now when missing or older than the sources, never a stale one.
if (ensureFreshDist(projectRoot) === 'rebuilt') console.log('dist/ was missing or older than the sources: rebuilt');
// codex-acp runs codex's commands through bubblewrap, a Debian package npm cannot bring (.ci/run installs it).
if (spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).status !== 0) {
  skip(missingPackageReason('bubblewrap', 'bubblewrap (bwrap), which codex over ACP and every confined live task need,'));
}
const probe = spawnSync('unshare', ['-n', 'true'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) skip(`cannot create a network namespace (unshare -n: ${probe.error?.message ?? probe.stderr.trim()}); it needs root`);
const ip = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
if (ip.status !== 0) skip(`cannot bring loopback up in a namespace: ${ip.stderr.trim()}`);

const only = process.argv.slice(2);
const files = only.length ? only.map((a) => join('test/agents/live', `${a}.live.ts`)) : ['test/agents/live/*.live.ts'];
const mocha = join(projectRoot, 'node_modules', '.bin', 'mocha');
// --config none of .mocharc's spec list: this suite names its own files.
const notRunHooks = join(projectRoot, 'test', 'support', 'not-run-hooks.ts');
const args = ['-n', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', mocha, '--no-config', '--require', 'tsx/cjs', '--require', notRunHooks, '--extension', 'ts', '--timeout', '420000', '--reporter', 'spec', ...mochaHonestyFlags(), ...files];
const result = spawnSync('unshare', args, { cwd: projectRoot, stdio: 'inherit', env: process.env });
process.exit(result.status ?? 1);
