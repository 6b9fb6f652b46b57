// JSON splicing (src/platform/db/fast/README.md): an answer holding a page of 100 message objects,
// assembled from each object's cached UTF-8 JSON and the reader's flags as a JsonText and spliced in by
// serializeWithText, against making each object (the cached shared fields plus the flags) and
// JSON.stringify of the answer, encoded for the socket. In process, no store: the cache is a Map.
import { JsonText, serializeWithText } from '../../src/platform/db/fast/json-text.js';
import type { Benchmark } from '../lib.js';
import { compare } from '../micro.js';

const PAGE = 100;

/** A message object as Chat's GET /messages shows it, minus the reader's flags (about 700 bytes of JSON). */
function sharedMessage(id: number): Record<string, unknown> {
  return {
    id,
    sender_id: 10 + (id % 7),
    content: `<p>Message ${id}: a paragraph of rendered Markdown, with <strong>some</strong> markup, a <a href="https://example.com/${id}">link</a> and enough words to be an ordinary chat message of a line or two.</p>`,
    recipient_id: 3,
    timestamp: 1_700_000_000 + id,
    client: 'ZulipPython',
    subject: 'benchmarks',
    topic_links: [],
    is_me_message: false,
    reactions: [],
    submessages: [],
    sender_full_name: `User ${10 + (id % 7)}`,
    sender_email: `user${10 + (id % 7)}@example.com`,
    sender_realm_str: '',
    display_recipient: 'general',
    type: 'stream',
    avatar_url: null,
    content_type: 'text/html',
    stream_id: 1,
  };
}

const FLAG_SETS = [['read'], [], ['read', 'starred'], ['read', 'mentioned']];

export const benchmark: Benchmark = {
  name: 'fast/json-splicing',
  summary: `an answer with ${PAGE} cached message objects and per-reader flags: JsonText + serializeWithText vs objects + JSON.stringify, as UTF-8`,
  run: async () => {
    const shared = Array.from({ length: PAGE }, (_, i) => Object.freeze(sharedMessage(1000 + i)));
    // What the fast path caches per message: its JSON without the closing brace, as UTF-8.
    const heads = shared.map((m) => Buffer.from(JSON.stringify(m).slice(0, -1)));
    const tails = FLAG_SETS.map((f) => Buffer.from(`,"flags":${JSON.stringify(f)}}`));
    const open = Buffer.from('[');
    const comma = Buffer.from(',');
    const close = Buffer.from(']');
    const envelope = (messages: unknown) => ({
      result: 'success',
      msg: '',
      anchor: 1099,
      found_anchor: true,
      found_oldest: false,
      found_newest: true,
      history_limited: false,
      messages,
    });
    return compare({
      unit: 'answers',
      plain: (n) => Buffer.from(JSON.stringify(envelope(shared.map((m, i) => ({ ...m, flags: [...FLAG_SETS[(i + n) % FLAG_SETS.length]] }))))),
      fast: (n) => {
        const parts: Buffer[] = [open];
        for (let i = 0; i < PAGE; i++) {
          if (i) parts.push(comma);
          parts.push(heads[i], tails[(i + n) % tails.length]);
        }
        parts.push(close);
        return serializeWithText(envelope(new JsonText(parts)));
      },
      detail: `${(JSON.stringify(envelope(shared)).length / 1024).toFixed(0)} KB answer`,
    });
  },
};
