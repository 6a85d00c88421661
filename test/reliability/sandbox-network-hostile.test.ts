import { strict as assert } from 'node:assert';
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import { makeRepo, startFixture, waitForFinished } from '../engine/runtime/helpers';
import { probeAgent, probeResults, type Probe } from '../engine/sandbox/helpers';
import { needs } from '../support/needs';

/**
 * Issue 21 item 3, as an attacker inside a task whose network is cut would try it: reach a service of the host other
 * than its model endpoint (a database on another loopback port, one on IPv6 loopback, an abstract UNIX socket — the
 * kind X11 and container shims listen on, scoped by network namespace — and a UDP datagram out). Each is refused, and
 * the host's listeners see nothing; the same probes with the network open reach every one (the last test), so each
 * assertion here can fail. When the model endpoint is a host name (`localhost` here), the agent has a filtering proxy
 * too: tunnels through it to those services, by name or by address, are refused as well.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: a task with its network cut reaches only its model endpoint', function () {
  this.timeout(90_000);
  const abstractName = `caesar-hostile-${process.pid}-${Date.now()}`;
  const servers: Array<{ close(): unknown }> = [];
  const reached = new Set<string>();
  let model = 0;
  let tcp = 0;
  let tcp6 = 0;
  let udp = 0;

  /** A TCP server answering `label`, noting each connection it gets. */
  function listen(label: string, options: net.ListenOptions): Promise<number> {
    const server = net.createServer((socket) => {
      reached.add(label);
      socket.end(`${label}\n`);
    });
    servers.push(server);
    return new Promise((resolve) => server.listen(options, () => resolve((server.address() as net.AddressInfo | null)?.port ?? 0)));
  }

  before(async function () {
    await needs(this, 'bubblewrap', 'socat');
    model = await listen('model', { host: '127.0.0.1', port: 0 });
    tcp = await listen('database', { host: '127.0.0.1', port: 0 });
    tcp6 = await listen('ipv6 service', { host: '::1', port: 0 });
    await listen('abstract socket', { path: `\0${abstractName}` });
    const socket = dgram.createSocket('udp4');
    socket.on('message', () => reached.add('udp'));
    servers.push(socket);
    udp = await new Promise<number>((resolve) => socket.bind(0, '127.0.0.1', () => resolve(socket.address().port)));
  });
  after(() => {
    for (const server of servers) server.close();
  });

  const read = (address: string, label: string) => `exec 3<>/dev/tcp/${address} && grep -q '${label}' <&3`;
  const attacks = (): Probe[] => [
    ['another loopback port', read(`127.0.0.1/${tcp}`, 'database')],
    ['ipv6 loopback', read(`::1/${tcp6}`, 'ipv6 service')],
    // unix-tightsocklen=0: Node binds an abstract name padded to the full sockaddr length, socat must connect so.
    ['abstract unix socket', `socat -T2 - ABSTRACT-CONNECT:${abstractName},unix-tightsocklen=0 </dev/null | grep -q 'abstract socket'`],
    ['udp datagram', `echo leak > /dev/udp/127.0.0.1/${udp}`],
  ];
  // Through the proxy the environment names (none when the network is open: curl then goes direct). The services
  // answer raw bytes, not HTTP: --http0.9 reads them, a CONNECT tunnel carries them.
  const tunnel = (url: string, label: string) => `curl -s -m 5 --proxytunnel --http0.9 '${url}' | grep -q '${label}'`;
  const proxyAttacks = (): Probe[] => [
    ['proxy tunnel to another loopback port', tunnel(`http://localhost:${tcp}/`, 'database')],
    ['proxy tunnel to another loopback port by address', tunnel(`http://127.0.0.1:${tcp}/`, 'database')],
    ['proxy tunnel to ipv6 loopback', tunnel(`http://[::1]:${tcp6}/`, 'ipv6 service')],
  ];
  const modelProbe = (): Probe => ['model endpoint', read(`127.0.0.1/${model}`, 'model')];
  const namedModelProbe = (): Probe => ['model endpoint', tunnel(`http://localhost:${model}/`, 'model')];

  async function runProbes(networkCut: boolean, named = false): Promise<Map<string, string>> {
    reached.clear();
    const root = makeRepo();
    const probes = named ? [namedModelProbe(), ...attacks(), ...proxyAttacks()] : [modelProbe(), ...attacks(), ...proxyAttacks()];
    const endpoint = named ? `localhost:${model}` : `127.0.0.1:${model}`;
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), network_cut: networkCut, sandbox: { mode: 'required', allow_hosts: [endpoint] } });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', JSON.stringify(done.result.report));
    assert.equal(done.state.network, !networkCut);
    return probeResults(done.state.worktree!);
  }

  it('network cut: the model endpoint answers; every other service of the host is out of reach and sees nothing', async () => {
    const results = await runProbes(true);
    assert.equal(results.get('model endpoint'), 'ok');
    for (const [label] of [...attacks(), ...proxyAttacks()].filter(([l]) => l !== 'udp datagram')) assert.equal(results.get(label), 'refused', label);
    assert.deepEqual([...reached].sort(), ['model']);
  });

  it('network cut, the endpoint a host name: the model answers through the proxy; nothing else, through it or around it', async () => {
    const results = await runProbes(true, true);
    assert.equal(results.get('model endpoint'), 'ok');
    for (const [label] of [...attacks(), ...proxyAttacks()].filter(([l]) => l !== 'udp datagram')) assert.equal(results.get(label), 'refused', label);
    assert.deepEqual([...reached].sort(), ['model']);
  });

  it('network open (the control): the same probes reach every one', async () => {
    const results = await runProbes(false);
    for (const [label] of [...attacks(), ...proxyAttacks()]) assert.equal(results.get(label), 'ok', label);
    assert.deepEqual([...reached].sort(), ['abstract socket', 'database', 'ipv6 service', 'model', 'udp']);
  });
});
