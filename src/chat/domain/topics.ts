// Topic and message body rules (seed convention 5 and Zulip's normalisation): "(no topic)" and the
// empty-topic display name mean "", over-long topics and bodies are truncated as Zulip does.
import { emptyMessage, messageNullBytes, topicBadCharacter } from '../errors.js';
import { EMPTY_TOPIC_DISPLAY_NAME, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from './realm.js';

const chars = (s: string) => [...s];

/** A topic as sent, made into the stored topic name. */
export function normaliseTopic(raw: string): string {
  const topic = raw.trim();
  if (topic === '(no topic)' || topic === EMPTY_TOPIC_DISPLAY_NAME) return '';
  // eslint-disable-next-line no-control-regex
  const bad = chars(topic).findIndex((c) => /[\u0000-\u001f\u007f\ufffe\uffff]/.test(c));
  if (bad >= 0) throw topicBadCharacter({ position: bad + 1 });
  const cs = chars(topic);
  return cs.length > MAX_TOPIC_LENGTH ? cs.slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...' : topic;
}

/** The topic as shown to a client: "" becomes the display name unless the client handles "". */
export function displayTopic(topic: string, allowEmpty: boolean): string {
  return topic === '' && !allowEmpty ? EMPTY_TOPIC_DISPLAY_NAME : topic;
}

const TRUNCATED = '\n[message truncated]';

/** Zulip strips trailing space and leading blank lines, refuses empty or NUL bodies, truncates long ones. */
export function normaliseBody(raw: string): string {
  const body = raw.trimEnd().replace(/^\n+/, '');
  if (body === '') throw emptyMessage();
  if (body.includes('\u0000')) throw messageNullBytes();
  const cs = chars(body);
  return cs.length > MAX_MESSAGE_LENGTH ? cs.slice(0, MAX_MESSAGE_LENGTH - TRUNCATED.length).join('') + TRUNCATED : body;
}
