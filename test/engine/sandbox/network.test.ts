import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { agentModelEndpoints } from '../../../src/engine/sandbox/agent-endpoints';
import { isLoopback, parseEndpoint } from '../../../src/engine/sandbox/network';
import { procNetAddress } from '../../../src/engine/sandbox/network-bridge';
import { taskPaths } from '../../../src/protocol';
import { makeRepo, startFixture, waitForFinished } from '../runtime/helpers';
import { probeAgent, probeResults, type Probe } from './helpers';
import { needs } from '../../support/needs';

/** A loopback HTTP server answering `label` to every request: the fake model, or another service of the host. */
async function server(label: string): Promise<{ port: number; close: () => Promise<void> }> {
  const s = http.createServer((_req, res) => res.end(`${label}\n`));
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { port: (s.address() as AddressInfo).port, close: () => new Promise((resolve) => s.close(() => resolve())) };
}

/** bash only (no curl needed): a GET over /dev/tcp, the reply must carry `label`. */
const get = (port: number, label: string) => `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q ${label} <&3`;

describe('sandbox network: endpoints', () => {
  it('parses URLs and host:port, with the scheme default port', () => {
    assert.deepEqual(parseEndpoint('http://127.0.0.1:18080/v1'), { host: '127.0.0.1', port: 18080 });
    assert.deepEqual(parseEndpoint('127.0.0.1:9'), { host: '127.0.0.1', port: 9 });
    assert.deepEqual(parseEndpoint('127.0.0.1:80'), { host: '127.0.0.1', port: 80 }, 'the http default port, written bare, kept');
    assert.deepEqual(parseEndpoint('api.example.com'), { host: 'api.example.com', port: 443 });
    assert.deepEqual(parseEndpoint('[::1]:8080'), { host: '::1', port: 8080 });
    assert.equal(parseEndpoint('127.0.0.1:99999'), undefined);
    assert.deepEqual(parseEndpoint('https://api.anthropic.com'), { host: 'api.anthropic.com', port: 443 });
    assert.deepEqual(parseEndpoint('http://localhost'), { host: 'localhost', port: 80 });
    assert.equal(parseEndpoint('file:///etc/passwd'), undefined);
    assert.equal(parseEndpoint('  '), undefined);
    assert.equal(isLoopback('127.3.0.1'), true);
    // A name, even localhost, is the proxy's: what it resolves to is the host resolver's to say.
    assert.equal(isLoopback('localhost'), false);
    assert.equal(isLoopback('127.0.0.256'), false);
    assert.equal(isLoopback('127.0.0.1.evil.com'), false);
    assert.equal(isLoopback('10.0.0.1'), false);
  });

  it('each adapter declares its model endpoint: the configured base URL, else its vendor host', () => {
    assert.deepEqual(agentModelEndpoints('claude', { ANTHROPIC_BASE_URL: 'http://127.0.0.1:7000' }), ['http://127.0.0.1:7000']);
    assert.deepEqual(agentModelEndpoints('claude', {}), ['https://api.anthropic.com']);
    assert.deepEqual(agentModelEndpoints('gemini', { GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:7001' }), ['http://127.0.0.1:7001']);
    assert.deepEqual(agentModelEndpoints('copilot', { COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:7002' }), ['http://127.0.0.1:7002']);
    const home = mkdtempSync(path.join(tmpdir(), 'caesar-endpoints-'));
    writeFileSync(path.join(home, 'config.toml'), 'model_provider = "fake"\n[model_providers.fake]\nbase_url = "http://127.0.0.1:7003/v1"\n');
    assert.deepEqual(agentModelEndpoints('codex', { CODEX_HOME: home }), ['http://127.0.0.1:7003/v1']);
    const opencode = path.join(home, 'opencode.json');
    writeFileSync(opencode, JSON.stringify({ provider: { fake: { options: { baseURL: 'http://127.0.0.1:7004/v1' } } } }));
    assert.deepEqual(agentModelEndpoints('opencode', { OPENCODE_CONFIG: opencode, HOME: home }), ['http://127.0.0.1:7004/v1']);
    assert.deepEqual(agentModelEndpoints('probe', {}), []);
  });

  it('names a listening address as /proc/net/tcp prints it', () => {
    assert.equal(procNetAddress({ host: '127.0.0.1', port: 8080 }), '0100007F:1F90');
  });
});

/** Real tasks, the bash probe agent inside bwrap, real loopback servers on the host. */
(process.platform === 'linux' ? describe : describe.skip)('sandbox network: tasks', function () {
  this.timeout(60_000);
  let model: Awaited<ReturnType<typeof server>>;
  let other: Awaited<ReturnType<typeof server>>;
  before(async function () {
    await needs(this, 'bubblewrap', 'socat');
    model = await server('fake-model-ok');
    other = await server('other-service');
  });
  after(async () => {
    await model?.close();
    await other?.close();
  });

  const probes = (): Probe[] => [
    ['model port', get(model.port, 'fake-model-ok')],
    ['model port via localhost', `exec 3<>/dev/tcp/localhost/${model.port}`],
    ['other loopback port', get(other.port, 'other-service')],
    ['model port on another loopback address', `exec 3<>/dev/tcp/127.0.0.2/${model.port}`],
  ];

  it('network cut: the allowed model port answers, every other loopback port refuses, task.json says false', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: true, sandbox: { mode: 'required', allow_hosts: [`127.0.0.1:${model.port}`] } });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', JSON.stringify(done.result.report));
    const results = probeResults(done.state.worktree!);
    assert.equal(results.get('model port'), 'ok');
    assert.equal(results.get('model port via localhost'), 'ok');
    assert.equal(results.get('other loopback port'), 'refused');
    assert.equal(results.get('model port on another loopback address'), 'refused');
    assert.equal(JSON.parse(readFileSync(taskPaths(root, id).task, 'utf8')).network, false);
    assert.equal(done.state.network, false);
    assert.deepEqual(readdirSync('/tmp').filter((name) => name.startsWith('caesar-net-') && bridgeOf(name, model.port)), [], 'the bridge folder is removed');
  });

  it('network open: both loopback ports answer and task.json says true', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: false, sandbox: { mode: 'required', allow_hosts: [`127.0.0.1:${model.port}`] } });
    const done = await waitForFinished(root, id);
    const results = probeResults(done.state.worktree!);
    assert.equal(results.get('model port'), 'ok');
    assert.equal(results.get('other loopback port'), 'ok');
    assert.equal(JSON.parse(readFileSync(taskPaths(root, id).task, 'utf8')).network, true);
  });

  it('no endpoint allowed: nothing answers, not even the model port', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: true, sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    const results = probeResults(done.state.worktree!);
    assert.equal(results.get('model port'), 'refused');
    assert.equal(results.get('other loopback port'), 'refused');
    assert.equal(JSON.parse(readFileSync(taskPaths(root, id).task, 'utf8')).network, false);
  });

  it('socat missing: the network stays open, task.json says true, and a finding names the fix', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: true, sandbox: { mode: 'required', allow_hosts: [`127.0.0.1:${model.port}`] } }, { CAESAR_SOCAT: '' });
    const done = await waitForFinished(root, id);
    assert.equal(probeResults(done.state.worktree!).get('other loopback port'), 'ok');
    assert.equal(JSON.parse(readFileSync(taskPaths(root, id).task, 'utf8')).network, true);
    const finding = done.result.report.findings.find((f) => f.title === 'Network not cut by the sandbox');
    assert.ok(finding && /socat.*apt install socat/.test(finding.detail), JSON.stringify(done.result.report.findings));
  });

  it('a loopback endpoint below port 1024 cannot be bridged: the network stays open at once, and the finding says how to fix it', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: true, sandbox: { mode: 'required', allow_hosts: ['127.0.0.1:80'] } });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', JSON.stringify(done.result.report));
    assert.equal(probeResults(done.state.worktree!).get('other loopback port'), 'ok');
    const finding = done.result.report.findings.find((f) => f.title === 'Network not cut by the sandbox');
    assert.ok(finding && /127\.0\.0\.1:80 is on a port below 1024.*1024 or above/.test(finding.detail), JSON.stringify(done.result.report.findings));
  });

  it('a host-name endpoint whose proxy bundle is missing: the network stays open, and the finding says why', async () => {
    const root = makeRepo();
    const missing = path.join(root, 'no-host-proxy.js');
    const { id } = await startFixture(root, {}, { ...probeAgent(probes()), network_cut: true, sandbox: { mode: 'required', allow_hosts: ['api.example.com'] } }, { CAESAR_HOST_PROXY_JS: missing });
    const done = await waitForFinished(root, id);
    assert.equal(JSON.parse(readFileSync(taskPaths(root, id).task, 'utf8')).network, true);
    const finding = done.result.report.findings.find((f) => f.title === 'Network not cut by the sandbox');
    assert.ok(finding && /api\.example\.com:443 is a host name, and the proxy that filters by name is missing/.test(finding.detail), JSON.stringify(done.result.report.findings));
  });
});

/** Whether a leftover bridge folder is this test's (its socket names the model port). */
function bridgeOf(dir: string, port: number): boolean {
  try {
    return readdirSync(path.join('/tmp', dir)).some((name) => name.endsWith(`-${port}.sock`));
  } catch {
    return false;
  }
}
