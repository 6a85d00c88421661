import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ensureSystemPackages, installRights, packagesFor, SYSTEM_PACKAGES } from '../../../scripts/system-packages.mjs';
import { fakeApt } from './fake-apt';

/**
 * The one list of Debian packages (scripts/system-packages.mjs) and what `npm start`, `npm test` and .ci/run do when
 * one is missing: install it when this user may, saying what and why, or stop with the one command to run. The
 * package tools are fakes on PATH (fake-apt.ts): nothing is installed or removed on this machine.
 */
const ROOT = path.resolve(__dirname, '../../..');

describe('system packages: one list, installed or named with the one command', () => {
  it('every package says why it is needed and who needs it; start needs no browser and no Slurm', () => {
    for (const pkg of SYSTEM_PACKAGES) {
      assert.ok(pkg.why.length > 10 && pkg.uses.length > 0 && pkg.probe, pkg.name);
    }
    const start = packagesFor(['start']).map((p) => p.name);
    assert.ok(start.includes('libkrb5-dev') && start.includes('bubblewrap'), start.join(' '));
    assert.ok(!start.includes('chromium') && !start.includes('slurm-wlm'), start.join(' '));
    assert.ok(packagesFor(['editor']).some((p) => p.name === 'chromium'));
    assert.deepEqual(packagesFor().map((p) => p.name), SYSTEM_PACKAGES.map((p) => p.name), 'no use: all of them (.ci/run)');
  });

  it('bash reads the same list: --names prints one a line', () => {
    const r = spawnSync(process.execPath, ['scripts/system-packages.mjs', '--names', 'slurm'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), packagesFor(['slurm']).map((p) => p.name));
  });

  it('as root with apt: installs only what is missing, after one apt-get update, saying what and why', () => {
    const apt = fakeApt(['chromium', 'socat']);
    try {
      const said: string[] = [];
      const installed = ensureSystemPackages(['editor', 'mocha'], { env: apt.env, uid: 0, log: (l) => said.push(l) });
      assert.deepEqual(installed, ['socat', 'chromium']);
      assert.deepEqual(apt.calls(), ['DEBIAN_FRONTEND=noninteractive update -qq', 'DEBIAN_FRONTEND=noninteractive install -y -qq --no-install-recommends socat chromium']);
      assert.match(said.join('\n'), /socat +the sandbox's network cut/);
      assert.match(said.join('\n'), /chromium +the editor suite drives/);
      assert.deepEqual(ensureSystemPackages(['editor', 'mocha'], { env: apt.env, uid: 0 }), [], 'nothing left to install: no apt-get call');
      assert.equal(apt.calls().length, 2);
    } finally {
      apt.remove();
    }
  });

  it('not root, passwordless sudo: installs through sudo', () => {
    const apt = fakeApt(['bubblewrap'], { sudoWorks: true });
    try {
      assert.deepEqual(installRights(apt.env, 1000), { can: true, prefix: ['sudo'] });
      assert.deepEqual(ensureSystemPackages(['mocha'], { env: apt.env, uid: 1000, log: () => undefined }), ['bubblewrap']);
      assert.ok(apt.calls().includes('sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap'), apt.calls().join('\n'));
    } finally {
      apt.remove();
    }
  });

  it('not root and no sudo: installs nothing and stops with the one exact command, naming each package and why', () => {
    const apt = fakeApt(['bubblewrap', 'libkrb5-dev']);
    try {
      assert.throws(
        () => ensureSystemPackages(['start'], { env: apt.env, uid: 1000 }),
        (err: Error) => {
          assert.match(err.message, /needs root \(or sudo without a password\)/);
          assert.match(err.message, /libkrb5-dev +code-server's install builds/);
          assert.match(err.message, /\n {2}sudo apt-get update && sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libkrb5-dev bubblewrap$/);
          return true;
        },
      );
      assert.deepEqual(apt.calls().filter((c) => !c.startsWith('sudo -n')), [], 'no install attempted');
    } finally {
      apt.remove();
    }
  });

  it('npm start stops before anything else with that command when it cannot install (no editor install, no build)', () => {
    const apt = fakeApt(['libkrb5-dev']);
    try {
      // A machine without apt-get (PATH holds the fake dpkg-query alone): the check must stop the start at once.
      apt.removeAptGet();
      const r = spawnSync(process.execPath, ['scripts/start.mjs', '--smoke'], {
        cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { ...process.env, PATH: apt.dir, CAESAR_CACHE: apt.dir },
      });
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /npm start: missing system packages \(this is not a Debian\/Ubuntu system \(no apt-get\)\):\n {2}libkrb5-dev/);
      assert.doesNotMatch(r.stdout, /1\/5|installing the editor/, 'nothing else started');
    } finally {
      apt.remove();
    }
  });
});
