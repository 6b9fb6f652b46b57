// Chat: an index over each channel's topics (case-insensitive, as topics compare), newest last. A
// topic narrow (GET /messages), @**topic**'s participants and the topic lists read a topic's
// messages through it instead of scanning every message of the realm.
import type { Migration } from '../../platform/db/migrate.js';

export const chatTopicIndex: Migration = {
  version: 7,
  name: 'chat topic index',
  up: () => [`CREATE INDEX messages_stream_topic ON messages (stream_id, lower(topic), id)`],
};
