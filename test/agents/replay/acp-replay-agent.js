// A fake ACP agent replaying a transcript of a real one; acp-replayer.ts prepends TRANSCRIPT and FROM to this file
// and makes the whole an executable (see there). Plain JavaScript with no imports: it runs as the agent's process,
// inside Caesar's sandbox, not under the test runner.
/* global TRANSCRIPT, FROM */
(function replay(transcript, from) {
  const here = process.cwd();
  const swap = (m) => JSON.parse(JSON.stringify(m).split(from).join(here));
  const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
  const expected = new Set(transcript.filter((e) => e.dir === 'client->agent' && typeof e.msg.method === 'string').map((e) => e.msg.method));
  const inbox = [];
  let wake;
  let buffer = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      // A request the recorded client never made (a mode or model switch): acknowledged, as an agent would.
      if (typeof m.method === 'string' && m.id !== undefined && !expected.has(m.method)) send({ jsonrpc: '2.0', id: m.id, result: {} });
      else inbox.push(m);
    }
    if (wake) wake();
  });
  process.stdin.on('end', () => process.exit(0));
  const next = async (match) => {
    for (;;) {
      const i = inbox.findIndex(match);
      if (i >= 0) return inbox.splice(i, 1)[0];
      await new Promise((resolve) => (wake = resolve));
    }
  };
  const isRequest = (m) => typeof m.method === 'string' && m.id !== undefined;
  // The recorded client's request ids → the real client's, to answer under the id the real client is waiting on.
  const ids = new Map();
  // Recorded requests the real client skipped (a mode switch it does not make): their answers are not sent.
  const skipped = new Set();
  (async () => {
    for (const [at, { dir, msg }] of transcript.entries()) {
      if (dir === 'client->agent') {
        if (isRequest(msg)) {
          const later = new Set(transcript.slice(at + 1).filter((e) => e.dir === 'client->agent' && isRequest(e.msg)).map((e) => e.msg.method));
          const real = await next((m) => isRequest(m) && (m.method === msg.method || later.has(m.method)));
          if (real.method === msg.method) ids.set(msg.id, real.id);
          else {
            skipped.add(msg.id);
            inbox.unshift(real);
          }
        } else if (msg.method === undefined) {
          await next((m) => m.method === undefined && m.id === msg.id);
        }
      } else if (msg.method === undefined && msg.id !== undefined) {
        if (!skipped.has(msg.id)) send({ ...swap(msg), id: ids.get(msg.id) });
      } else {
        send(swap(msg));
      }
    }
  })();
})(TRANSCRIPT, FROM);
