// Installs the pinned agent CLIs with npm into `${CAESAR_CACHE:-~/.cache/caesar-dev}/agents/<pkg>@<version>/`.
// Idempotent: a package whose `.installed` marker exists is skipped. Installs go to a temp sibling folder that is
// renamed into place only when npm succeeded, so an interrupted run never leaves a half-installed CLI behind.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PINNED, installDir, doneMarker, cacheRoot } from './agents.mjs';
import { cleanNpmEnv } from '../../../scripts/setup-editor.mjs';

function sizeOf(dir) {
  const du = spawnSync('du', ['-sh', dir], { encoding: 'utf8' });
  return du.status === 0 ? du.stdout.split('\t')[0] : '?';
}

const only = process.argv.slice(2);
let failures = 0;
console.log(`agent CLI cache: ${cacheRoot()}/agents`);
for (const entry of PINNED) {
  if (only.length && !only.includes(entry.agent)) continue;
  const dir = installDir(entry);
  const spec = `${entry.pkg}@${entry.version}`;
  if (existsSync(doneMarker(entry))) {
    console.log(`${spec}: present (${sizeOf(dir)})`);
    continue;
  }
  console.log(`${spec}: installing…`);
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  // A package.json of its own keeps npm from walking up into some other project.
  writeFileSync(`${staging}/package.json`, JSON.stringify({ name: 'caesar-agent-cache', private: true }) + '\n');
  const started = Date.now();
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--save-exact', '--prefix', staging, spec], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: cleanNpmEnv(),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (npm.status !== 0) {
    console.log(`${spec}: npm install FAILED (exit ${npm.status ?? npm.signal}, ${seconds} s)`);
    rmSync(staging, { recursive: true, force: true });
    failures++;
    continue;
  }
  writeFileSync(`${staging}/.installed`, JSON.stringify({ spec, installed_at: new Date().toISOString() }) + '\n');
  mkdirSync(dirname(dir), { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  console.log(`${spec}: installed in ${seconds} s (${sizeOf(dir)})`);
}
process.exitCode = failures ? 1 : 0;
