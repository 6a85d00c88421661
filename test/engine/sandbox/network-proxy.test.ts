import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startHostProxy } from '../../../src/engine/sandbox/host-proxy-server';
import { decideNetwork } from '../../../src/engine/sandbox/network';
import { taskPaths } from '../../../src/protocol';
import { ensureFreshDist } from '../../support/dist-freshness.mjs';
import { REPO_ROOT, makeRepo, startFixture, waitForFinished } from '../runtime/helpers';
import { probeAgent, probeResults, type Probe } from './helpers';
import { needs } from '../../support/needs';

/** A loopback HTTP server answering `label`, noting that it was reached. */
async function server(label: string, reached: Set<string>): Promise<{ port: number; close: () => Promise<void> }> {
  const s = http.createServer((_req, res) => {
    reached.add(label);
    res.end(`${label}\n`);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { port: (s.address() as AddressInfo).port, close: () => new Promise((resolve) => s.close(() => resolve())) };
}

/** One raw request through the proxy's UNIX socket: its status line's code. */
function through(socket: string, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const client = net.connect(socket);
    let head = '';
    client.on('data', (chunk) => {
      head += chunk.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (m) {
        client.destroy();
        resolve(Number(m[1]));
      }
    });
    client.on('error', reject);
    client.write(request);
  });
}

describe('host-name proxy: the filter', function () {
  this.timeout(20_000);
  const reached = new Set<string>();
  let model: Awaited<ReturnType<typeof server>>;
  let other: Awaited<ReturnType<typeof server>>;
  let dir = '';
  before(async () => {
    model = await server('model', reached);
    other = await server('other', reached);
    dir = mkdtempSync(path.join(tmpdir(), 'caesar-proxy-'));
  });
  after(async () => {
    await model.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets through exactly the allowed host:port, however the client spells that host, and nothing else', async () => {
    const socket = path.join(dir, 'proxy.sock');
    const proxy = await startHostProxy(socket, [{ host: 'localhost', port: model.port }]);
    try {
      const get = (authority: string) => through(socket, `GET http://${authority}/ HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
      const connect = (authority: string) => through(socket, `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
      assert.equal(await get(`localhost:${model.port}`), 200);
      assert.equal(await get(`LOCALHOST:${model.port}`), 200, 'the canonical spelling is what is judged');
      assert.equal(await connect(`LocalHost.:${model.port}`), 200, 'the canonical spelling is what is judged');
      assert.equal(await connect(`localhost:${model.port}`), 200);
      assert.deepEqual([...reached], ['model']);
      // Another port of the same host, the same port under another name (its address), and other names: 403.
      assert.equal(await get(`localhost:${other.port}`), 403);
      assert.equal(await connect(`localhost:${other.port}`), 403);
      assert.equal(await get(`127.0.0.1:${model.port}`), 403);
      assert.equal(await connect(`0x7f.1:${model.port}`), 403);
      assert.equal(await get(`example.invalid:${model.port}`), 403);
      // A Host header that names another host than the request's target is refused, not forwarded.
      assert.notEqual(await through(socket, `GET http://localhost:${model.port}/ HTTP/1.1\r\nHost: 127.0.0.1:${other.port}\r\n\r\n`), 200);
      assert.deepEqual([...reached], ['model'], 'the other service saw nothing');
    } finally {
      await proxy.close();
    }
  });

  it('decides a name endpoint is cut and proxied, a literal loopback address bridged, both allowed through the proxy', async function () {
    await needs(this, 'bubblewrap', 'socat');
    // Only what the decision needs (PATH for bwrap and socat): a developer's own ANTHROPIC_BASE_URL stays out.
    const env = { PATH: process.env.PATH, HOME: dir };
    const decision = await decideNetwork({ wanted: true, requested: true, agentId: 'probe', env, allowHosts: ['localhost:18009', 'http://127.0.0.1:18008'], mode: 'required' });
    assert.ok(decision.cut, JSON.stringify(decision));
    assert.deepEqual(decision.endpoints, [{ host: '127.0.0.1', port: 18008 }]);
    assert.deepEqual(decision.proxied, [{ host: 'localhost', port: 18009 }, { host: '127.0.0.1', port: 18008 }]);
    const missing = await decideNetwork({ wanted: true, requested: true, agentId: 'claude', env: { ...env, CAESAR_HOST_PROXY_JS: path.join(dir, 'nope.js') }, allowHosts: [], mode: 'required' });
    assert.equal(missing.cut, false);
    assert.match(missing.findings[0]?.detail ?? '', /api\.anthropic\.com:443 is a host name, and the proxy that filters by name is missing/);
  });
});

describe('host-name proxy: what ships', function () {
  this.timeout(120_000);
  it('its code is in dist/host-proxy.js alone, with the licences of what it bundles beside it', () => {
    ensureFreshDist(REPO_ROOT, { outputs: ['dist/host-proxy.js', 'dist/supervisor-main.js', 'dist/caesar-main.js', 'dist/extension.js'] });
    const read = (file: string) => readFileSync(path.join(REPO_ROOT, 'dist', file), 'utf8');
    // A string of the proxy's own (its refusal), and one of node-forge, which it pulls in.
    const marks = ['Connection blocked by network allowlist', 'forge.pki'];
    for (const mark of marks) assert.ok(read('host-proxy.js').includes(mark), `host-proxy.js lacks ${mark}`);
    // Every supervisor, the CLI and the extension load none of it unless a task needs it (host-proxy.ts requires it).
    for (const bundle of ['supervisor-main.js', 'caesar-main.js', 'extension.js']) {
      for (const mark of marks) assert.ok(!read(bundle).includes(mark), `${bundle} holds the proxy's code (${mark})`);
    }
    const licences = read('host-proxy.js.LICENSES.txt');
    assert.match(licences, /@anthropic-ai\/sandbox-runtime@0\.0\.83 \(Apache-2\.0\)\n\n\s*Apache License/);
    assert.match(licences, /node-forge@[\d.]+ /);
  });
});

/** Real tasks: the bash probe agent in bwrap, curl inside, the fake model on the host addressed as `localhost`. */
(process.platform === 'linux' ? describe : describe.skip)('host-name proxy: a sandboxed task whose endpoint is a name', function () {
  this.timeout(90_000);
  const reached = new Set<string>();
  let model: Awaited<ReturnType<typeof server>>;
  let other: Awaited<ReturnType<typeof server>>;
  before(async function () {
    await needs(this, 'bubblewrap', 'socat', 'curl');
    model = await server('fake-model-ok', reached);
    other = await server('other-service', reached);
  });
  after(async () => {
    await model?.close();
    await other?.close();
  });

  // curl takes its proxy from the environment the sandbox gave the agent (no --proxy, no --noproxy but where said).
  const status = (args: string, field = 'http_code') => `test "$(curl -s -m 10 -o /dev/null -w '%{${field}}' ${args})" = 403`;
  const probes = (): Probe[] => [
    ['model through the proxy', `curl -sf -m 10 http://localhost:${model.port}/ | grep -q fake-model-ok`],
    ['model through the proxy, tunnelled', `curl -sf -m 10 --proxytunnel http://localhost:${model.port}/ | grep -q fake-model-ok`],
    ['model bypassing the proxy', `curl -sf -m 5 --noproxy '*' http://localhost:${model.port}/ | grep -q fake-model-ok`],
    ['other port through the proxy', `curl -sf -m 10 http://localhost:${other.port}/ | grep -q other-service`],
    ['other port: proxy answers 403', status(`http://localhost:${other.port}/`)],
    ['other port tunnelled: proxy answers 403', status(`--proxytunnel http://localhost:${other.port}/`, 'http_connect')],
    ['model by its address through the proxy', `curl -sf -m 10 http://127.0.0.1:${model.port}/ | grep -q fake-model-ok`],
    ['another name: proxy answers 403', status('http://example.invalid/')],
    ['direct tcp to the model', `exec 3<>/dev/tcp/127.0.0.1/${model.port}`],
    ['direct tcp to the other port', `exec 3<>/dev/tcp/127.0.0.1/${other.port}`],
    ['proxy variables', 'test -n "$HTTPS_PROXY" && test "$http_proxy" = "$HTTPS_PROXY" && test -z "${NO_PROXY-}${no_proxy-}"'],
  ];

  async function run(allowHosts: string[]): Promise<{ results: Map<string, string>; task: { network: boolean }; done: Awaited<ReturnType<typeof waitForFinished>> }> {
    reached.clear();
    const root = makeRepo();
    // A NO_PROXY of the user's that names localhost would send curl around the proxy: the sandbox must clear it.
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: true, sandbox: { mode: 'required', allow_hosts: allowHosts } }, { NO_PROXY: 'localhost,127.0.0.1', no_proxy: 'localhost' });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', JSON.stringify(done.result.report));
    return { results: probeResults(done.state.worktree!), task: JSON.parse(readFileSync(taskPaths(root, id).task, 'utf8')), done };
  }

  it('reaches its endpoint only through the proxy; other ports, names and direct connections are refused; task.json says network: false', async () => {
    const { results, task, done } = await run([`localhost:${model.port}`]);
    const expected: Record<string, string> = {
      'model through the proxy': 'ok',
      'model through the proxy, tunnelled': 'ok',
      'model bypassing the proxy': 'refused',
      'other port through the proxy': 'refused',
      'other port: proxy answers 403': 'ok',
      'other port tunnelled: proxy answers 403': 'ok',
      'model by its address through the proxy': 'refused',
      'another name: proxy answers 403': 'ok',
      'direct tcp to the model': 'refused',
      'direct tcp to the other port': 'refused',
      'proxy variables': 'ok',
    };
    assert.deepEqual(Object.fromEntries(results), expected);
    assert.deepEqual([...reached], ['fake-model-ok'], 'the other service saw nothing');
    assert.equal(task.network, false);
    assert.equal(done.state.network, false);
    assert.equal(done.result.report.findings.find((f) => f.title === 'Network not cut by the sandbox'), undefined, JSON.stringify(done.result.report.findings));
  });

  it('control: with the proxy allowing the other port and the address too, the same probes get through', async () => {
    const { results, task } = await run([`localhost:${model.port}`, `localhost:${other.port}`, `127.0.0.1:${model.port}`]);
    assert.equal(results.get('other port through the proxy'), 'ok');
    assert.equal(results.get('other port: proxy answers 403'), 'refused');
    assert.equal(results.get('other port tunnelled: proxy answers 403'), 'refused');
    assert.equal(results.get('model by its address through the proxy'), 'ok');
    // 127.0.0.1:port is a literal address, bridged port to port as well: reached without the proxy too.
    assert.equal(results.get('direct tcp to the model'), 'ok');
    assert.equal(results.get('direct tcp to the other port'), 'refused');
    assert.deepEqual([...reached].sort(), ['fake-model-ok', 'other-service']);
    assert.equal(task.network, false);
  });
});
