import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { makeRepo, startFixture, waitForFinished } from '../engine/runtime/helpers';
import { probeAgent, probeResults, type Probe } from '../engine/sandbox/helpers';
import { needs } from '../support/needs';

/**
 * Issue 21: a read-only file system does not stop a connect(): a UNIX socket the user's session listens on is
 * reachable through `--ro-bind / /` unless it is hidden. The session bus at `$XDG_RUNTIME_DIR/bus` lets any client run
 * a program as the user, outside the sandbox (`systemd-run --user`, `org.freedesktop.systemd1`); the same folder holds
 * the gpg and ssh agents of a desktop session, the Wayland socket, a rootless docker, and Caesar's own warm
 * supervisor. `~/.Xauthority` opens the X server (keystrokes into the user's terminal). Here a listening socket stands
 * for the session bus, in a runtime folder of the test's own.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: a sandboxed agent cannot reach the user\'s session sockets', function () {
  this.timeout(60_000);
  let home: string;
  let runtime: string;
  let server: net.Server;
  let connections = 0;

  before(async function () {
    await needs(this, 'bubblewrap');
    home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-sockets-home-')));
    runtime = path.join(home, 'run-user');
    mkdirSync(runtime, { mode: 0o700 });
    writeFileSync(path.join(home, '.Xauthority'), 'MIT-MAGIC-COOKIE-1 secret\n');
    server = net.createServer((socket) => {
      connections++;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(path.join(runtime, 'bus'), resolve));
  });
  after(() => server?.close());

  const connect = (socket: string) => `node -e 'require("net").connect(process.argv[1]).on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' ${socket}`;
  const probes = (): Probe[] => [
    ['session bus', connect(path.join(runtime, 'bus'))],
    ['X authority', `grep -q MIT-MAGIC ${home}/.Xauthority`],
    ['bus address in the environment', 'test -n "$DBUS_SESSION_BUS_ADDRESS"'],
  ];

  async function runProbes(mode: 'required' | 'off'): Promise<Map<string, string>> {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const env = { HOME: home, XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: `unix:path=${runtime}/bus` };
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), sandbox: { mode } }, env);
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded');
    return probeResults(done.state.worktree!);
  }

  it('sandboxed: the runtime folder\'s sockets, the X cookie and the bus address are out of reach', async () => {
    const before = connections;
    const results = await runProbes('required');
    for (const [label] of probes()) assert.equal(results.get(label), 'refused', label);
    assert.equal(connections, before, 'the listener saw a connection');
  });

  it('control: with the sandbox off the same probes reach them (so each refusal above can fail)', async () => {
    const results = await runProbes('off');
    for (const [label] of probes()) assert.equal(results.get(label), 'ok', label);
  });
});
