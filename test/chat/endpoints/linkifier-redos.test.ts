// Black-box: an administrator's linkifier cannot stall the server. Linkifiers run on RE2, whose
// matching is linear in the text: with the pattern (a+)+b, a message of a's ending in another
// letter (exponential for a backtracking engine: 3.6 s at 31 bytes, four times more per two more
// characters) renders as fast as any other, and the DNS server in the same process keeps answering
// meanwhile. Patterns RE2 cannot run are refused when saved, with Zulip's error, storing nothing.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm } from '../../helpers/chat-realm.js';
import type { RunningServer, Storage } from '../../helpers/server.js';
import { ChatClient, type ChatReply } from '../../helpers/chat-client.js';
import { makeQuery, udpExchange } from '../../helpers/dns-client.js';

// Generous for a busy 2-core machine; the backtracking engine needs seconds even at 31 bytes.
const RENDER_BUDGET_MS = 50;
const DNS_BUDGET_MS = 500;

await forEachEngine('linkifier patterns run in linear time', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;

  before(async () => {
    ({ storage, server, owner } = await servedRealm(engine, { channel: { name: 'general', subscribers: ['owner'] } }));
  });
  after(async () => {
    // A server stuck in a backtracking match (the bug this pins) never reads SIGTERM.
    await Promise.race([server?.stop(), delay(5000).then(() => server?.kill9())]);
    await storage?.dispose();
  });

  /** Sends a message while querying the server's DNS every 10 ms; the send's time and each query's. */
  async function sendProbingDns(content: string): Promise<{ reply: ChatReply; ms: number; dnsMs: (number | null)[] }> {
    const t0 = performance.now();
    let done = false;
    const sending = owner.post('/messages', { type: 'stream', to: 'general', topic: 'redos', content });
    sending
      .catch(() => {})
      .finally(() => {
        done = true;
      });
    const probes: Promise<number | null>[] = [];
    while (!done && probes.length < 300) {
      const sent = performance.now();
      probes.push(udpExchange(server.dns, makeQuery('probe.example.', 'A'), 3000).then((r) => (r ? performance.now() - sent : null)));
      await Promise.race([sending.catch(() => {}), delay(10)]);
    }
    const timeout = delay(15_000).then(() => {
      throw new Error(`no answer to a ${content.length}-byte send in 15 s`);
    });
    const reply = await Promise.race([sending, timeout]);
    const ms = performance.now() - t0;
    return { reply, ms, dnsMs: await Promise.all(probes) };
  }

  it('renders a message built against (a+)+b as fast as a plain one, answering DNS meanwhile', async () => {
    const added = await owner.post('/realm/filters', { pattern: '(a+)+b', url_template: 'https://a.example/b' });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    // The linkifier works: a run of a's ending in b is a link.
    const linked = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'redos', content: 'see aaab' });
    const html = (await owner.get(`/messages/${linked.body.id}`)).body.message.content;
    assert.equal(html, '<p>see <a href="https://a.example/b">aaab</a></p>');

    for (const length of [31, 2048]) {
      const attack = 'a'.repeat(length - 1) + 'c';
      const plain = 'x'.repeat(length - 1) + 'c';
      // The best of five of each, interleaved, after one of each that warms up the JIT: noise on a
      // busy machine only ever adds time.
      // The DNS figure likewise: each send's slowest answer, the best of the sends (a stalled event
      // loop makes every send's slowest answer take seconds; a busy machine delays only some).
      let attackMs = Infinity,
        plainMs = Infinity,
        dnsWorst = Infinity;
      for (let i = 0; i < 6; i++) {
        const a = await sendProbingDns(attack);
        assert.equal(a.reply.status, 200, JSON.stringify(a.reply.body));
        const unanswered = a.dnsMs.filter((d) => d === null).length;
        assert.ok(a.dnsMs.length > 0);
        assert.equal(unanswered, 0, `${unanswered} of ${a.dnsMs.length} DNS queries sent during a ${a.ms.toFixed(0)} ms send got no answer in 3 s`);
        const p = await sendProbingDns(plain);
        assert.equal(p.reply.status, 200);
        if (i === 0) continue;
        dnsWorst = Math.min(dnsWorst, Math.max(...(a.dnsMs as number[])));
        attackMs = Math.min(attackMs, a.ms);
        plainMs = Math.min(plainMs, p.ms);
      }
      const renderMs = attackMs - plainMs;
      console.log(
        `# ${engine}: ${length}-byte send against (a+)+b ${attackMs.toFixed(1)} ms, plain ${plainMs.toFixed(1)} ms: ` +
          `render costs ${renderMs.toFixed(1)} ms more; slowest DNS answer meanwhile ${dnsWorst.toFixed(1)} ms (best send)`,
      );
      assert.ok(renderMs < RENDER_BUDGET_MS, `render took ${renderMs.toFixed(1)} ms more than a plain message`);
      assert.ok(dnsWorst < DNS_BUDGET_MS, `every send had a DNS answer slower than ${dnsWorst.toFixed(1)} ms`);
    }
  });

  it("refuses patterns RE2 cannot run with Zulip's error, storing nothing", async () => {
    const before = (await owner.get('/realm/linkifiers')).body.linkifiers;
    const cases: [string, string][] = [
      ['(a)\\1', 'Bad regular expression: invalid escape sequence: \\1'],
      ['a(?=x)', 'Bad regular expression: invalid perl operator: (?='],
      ['(?<!x)a', 'Bad regular expression: invalid perl operator: (?<!'],
    ];
    for (const [pattern, msg] of cases) {
      const r = await owner.post('/realm/filters', { pattern, url_template: 'https://a.example/' });
      assert.deepEqual([r.status, r.body], [400, { result: 'error', code: 'BAD_REQUEST', msg, errors: { __all__: [msg] } }]);
      const u = await owner.call('PATCH', `/realm/filters/${before[0].id}`, { pattern, url_template: 'https://a.example/' });
      assert.deepEqual([u.status, u.body.msg], [400, msg]);
    }
    assert.deepEqual((await owner.get('/realm/linkifiers')).body.linkifiers, before);
  });
});
