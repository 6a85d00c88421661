import { needs } from '../support/needs';
import { strict as assert } from 'node:assert';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { makeRepo, startFixture, waitForFinished } from '../engine/runtime/helpers';
import { probeAgent, probeResults, type Probe } from '../engine/sandbox/helpers';

/**
 * Issue 34: the host's UNIX sockets beyond the session's. A read-only mount does not stop a connect(), a cut network
 * does not either (a socket with a path is reached through the file system), and the agent is the user's own uid
 * outside: a root-owned 0600 socket answered an agent of Caesar run as root, as root. Here three listeners stand for
 * the host's services: a root-only one in a system folder (/var/tmp), one under /run, and one in the user's home
 * (shown to the agent read-only). Sandboxed, none answers, and name resolution still reads /etc/resolv.conf; the
 * control runs the same probes unsandboxed and reaches all three.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: a sandboxed agent cannot reach the host\'s UNIX sockets', function () {
  this.timeout(60_000);
  let home: string;
  let system: string;
  const sockets: Record<'root-only' | 'under /run' | 'in the home', string> = { 'root-only': '', 'under /run': '', 'in the home': '' };
  const servers: net.Server[] = [];
  let connections = 0;

  before(async function () {
    await needs(this, 'bubblewrap');
    home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-hostsock-home-')));
    system = mkdtempSync('/var/tmp/caesar-hostsock-');
    chmodSync(system, 0o755);
    mkdirSync(path.join(home, '.app'));
    sockets['root-only'] = path.join(system, 'daemon.sock');
    sockets['under /run'] = `/run/caesar-hostsock-${process.pid}.sock`;
    sockets['in the home'] = path.join(home, '.app', 'daemon.sock');
    for (const socket of Object.values(sockets)) {
      const server = net.createServer((c) => {
        connections++;
        c.end();
      });
      await new Promise<void>((resolve) => server.listen(socket, resolve));
      chmodSync(socket, 0o600);
      servers.push(server);
    }
  });
  after(() => {
    for (const server of servers) server.close();
    if (system) rmSync(system, { recursive: true, force: true });
  });

  const connect = (socket: string) => `node -e 'require("net").connect(process.argv[1]).on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' ${socket}`;
  const probes = (): Probe[] => [
    ...Object.entries(sockets).map(([label, socket]): Probe => [label, connect(socket)]),
    ['resolv.conf', 'test -r /etc/resolv.conf && cat /etc/resolv.conf'],
    ['who am i', 'id -u > uid-inside.txt'],
  ];

  async function runProbes(mode: 'required' | 'off'): Promise<{ results: Map<string, string>; worktree: string }> {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), sandbox: { mode } }, { HOME: home });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    return { results: probeResults(done.state.worktree!), worktree: done.state.worktree! };
  }

  it('sandboxed: a root-only socket, one under /run and one in the home are out of reach; names still resolve', async () => {
    const before = connections;
    const { results, worktree } = await runProbes('required');
    for (const label of Object.keys(sockets)) assert.equal(results.get(label), 'refused', label);
    assert.equal(results.get('resolv.conf'), 'ok', 'the /run tmpfs keeps what /etc links into it');
    assert.equal(connections, before, 'a listener saw a connection');
    // Measured (docs/sandbox.md): the agent's files are the user's outside, whatever its id inside.
    const uidInside = Number(readFileSync(path.join(worktree, 'uid-inside.txt'), 'utf8'));
    assert.equal(lstatSync(path.join(worktree, 'uid-inside.txt')).uid, process.getuid!(), `uid ${uidInside} inside is the user outside`);
  });

  it('control: unsandboxed, the same probes reach all three sockets (so each refusal above can fail)', async () => {
    const before = connections;
    const { results } = await runProbes('off');
    for (const label of Object.keys(sockets)) assert.equal(results.get(label), 'ok', label);
    assert.equal(connections, before + 3);
  });
});
