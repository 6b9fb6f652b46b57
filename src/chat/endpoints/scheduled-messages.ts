// Scheduled messages: GET/POST /scheduled_messages, PATCH/DELETE /scheduled_messages/{id}
// (zerver/views/scheduled_messages.py). Each change is a scheduled_messages event to the owner's
// queues; delivery is the scheduler's (domain/scheduled-delivery.ts), woken by every change.
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { nothingToChange, scheduledAlreadySent, deliveryTimeNotInFuture, scheduledRecipientRequired, scheduledTopicRequired } from '../errors.js';
import { unixSeconds } from '../../platform/clock.js';
import { checkRoom } from '../domain/bounds.js';
import { isChannelType } from '../domain/addressee.js';
import { checkTopicGiven } from '../domain/realm-rules.js';
import { normaliseTopic } from '../domain/topics.js';
import { addresseeColumns, checkDeliveryTime, checkScheduled, clientReadsOwnMessages, ownScheduled, parseScheduledTo, pendingScheduled, scheduledObject, toIds } from '../domain/scheduled-messages.js';
import { scheduledMessagesNotice } from '../events/scheduled-notices.js';
import type { ScheduledMessageRow } from '../tables.js';
import type { Updateable } from 'kysely';

const MessageType = Type.Union([Type.Literal('direct'), Type.Literal('channel'), Type.Literal('stream'), Type.Literal('private')]);
const To = Type.Union([Type.Integer(), Type.Array(Type.Integer())]);

function how(call: ChatCall) {
  return { client: call.client, nowSeconds: unixSeconds(call.services.clock), realmUrl: call.services.realmUrl(call.realm) };
}

export const getScheduledMessages = defineEndpoint({
  method: 'GET',
  path: '/scheduled_messages',
  summary: 'Get scheduled messages',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    return { scheduled_messages: await pendingScheduled(call.services.db.kysely, me.id) };
  },
});

export const createScheduledMessage = defineEndpoint({
  method: 'POST',
  path: '/scheduled_messages',
  summary: 'Create a scheduled message',
  auth: 'user',
  params: Type.Object({
    type: MessageType,
    to: To,
    content: Type.String(),
    topic: Type.Optional(Type.String()),
    scheduled_delivery_timestamp: Type.Integer(),
    read_by_sender: Type.Optional(Type.Boolean()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, clock } = call.services;
    checkDeliveryTime(p.scheduled_delivery_timestamp, clock.now());
    const to = parseScheduledTo(p.type, p.to);
    const checked = await checkScheduled(db.kysely, call.realm, me, { type: p.type, to, topic: p.topic, content: p.content }, how(call));
    // Zulip's legacy default: read for the sender when sent from one of its apps, unless sent to oneself alone.
    const toSelfOnly = checked.to.kind === 'direct' && checked.to.recipients.every((u) => u.id === me.id);
    const readBySender = p.read_by_sender ?? (clientReadsOwnMessages(call.client) && !toSelfOnly);
    const row = await events.write(
      () =>
        db.transaction(async (trx) => {
          await checkRoom(trx, 'scheduledMessagesPerUser', me.id, 1);
          return trx
            .insertInto('scheduled_messages')
            .values({
              realm_id: call.realm.id,
              sender_id: me.id,
              ...addresseeColumns(me, checked.to),
              content: checked.content,
              rendered_content: checked.rendered,
              client: call.client,
              scheduled_timestamp: p.scheduled_delivery_timestamp,
              read_by_sender: readBySender ? 1 : 0,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
        }),
      (made) => [scheduledMessagesNotice(me.id, { op: 'add', scheduled_messages: [scheduledObject(made)] })],
    );
    call.services.scheduler?.wake();
    return { scheduled_message_id: Number(row.id) };
  },
});

export const updateScheduledMessage = defineEndpoint({
  method: 'PATCH',
  path: '/scheduled_messages/{scheduled_message_id}',
  summary: 'Edit a scheduled message',
  auth: 'user',
  params: Type.Object({
    scheduled_message_id: Type.Integer({ minimum: 0 }),
    type: Type.Optional(MessageType),
    to: Type.Optional(To),
    content: Type.Optional(Type.String()),
    topic: Type.Optional(Type.String()),
    scheduled_delivery_timestamp: Type.Optional(Type.Integer()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, clock } = call.services;
    if (p.type === undefined && p.to === undefined && p.topic === undefined && p.content === undefined && p.scheduled_delivery_timestamp === undefined) throw nothingToChange();
    if (p.type !== undefined && p.to === undefined) throw scheduledRecipientRequired();
    if (p.type !== undefined && isChannelType(p.type) && p.topic === undefined) throw scheduledTopicRequired();
    if (p.scheduled_delivery_timestamp !== undefined) checkDeliveryTime(p.scheduled_delivery_timestamp, clock.now());
    const current = await ownScheduled(db.kysely, db.engine, me.id, p.scheduled_message_id);
    if (current.delivered === 1) throw scheduledAlreadySent();
    // A message the server failed to send needs a new delivery time.
    if (current.failed === 1 && p.scheduled_delivery_timestamp === undefined) throw deliveryTimeNotInFuture();
    const change: Updateable<ScheduledMessageRow> = { client: call.client, failed: 0, failure_message: null };
    if (p.type !== undefined || p.to !== undefined || p.content !== undefined) {
      // The message as it will be, checked again as a send checks it.
      const type = p.type ?? current.kind;
      const to = p.to !== undefined ? parseScheduledTo(type, p.to) : current.kind === 'stream' ? Number(current.stream_id) : toIds(current);
      const topic = p.topic ?? current.topic;
      const checked = await checkScheduled(db.kysely, call.realm, me, { type, to, topic, content: p.content ?? current.content }, how(call));
      if (p.type !== undefined || p.to !== undefined) Object.assign(change, addresseeColumns(me, checked.to));
      else if (p.topic !== undefined && current.kind === 'stream') change.topic = checked.to.kind === 'channel' ? checked.to.topic : current.topic;
      if (p.content !== undefined) Object.assign(change, { content: checked.content, rendered_content: checked.rendered });
    } else if (p.topic !== undefined && current.kind === 'stream') {
      // Only the topic: a direct message's is ignored.
      const topic = normaliseTopic(p.topic);
      checkTopicGiven(call.realm, topic, 'send');
      change.topic = topic;
    }
    if (p.scheduled_delivery_timestamp !== undefined) change.scheduled_timestamp = p.scheduled_delivery_timestamp;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          // Under the row's lock: a delivery under way has committed (delivered) or waits for this edit.
          const locked = await ownScheduled(trx, db.engine, me.id, p.scheduled_message_id, true);
          if (locked.delivered === 1) throw scheduledAlreadySent();
          return trx.updateTable('scheduled_messages').set(change).where('id', '=', locked.id).returningAll().executeTakeFirstOrThrow();
        }),
      (row) => [scheduledMessagesNotice(me.id, { op: 'update', scheduled_message: scheduledObject(row) })],
    );
    call.services.scheduler?.wake();
    return {};
  },
});

export const deleteScheduledMessage = defineEndpoint({
  method: 'DELETE',
  path: '/scheduled_messages/{scheduled_message_id}',
  summary: 'Delete a scheduled message',
  auth: 'user',
  params: Type.Object({ scheduled_message_id: Type.Integer({ minimum: 0 }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const row = await ownScheduled(trx, db.engine, me.id, p.scheduled_message_id, true);
          await trx.deleteFrom('scheduled_messages').where('id', '=', row.id).execute();
        }),
      () => [scheduledMessagesNotice(me.id, { op: 'remove', scheduled_message_id: p.scheduled_message_id })],
    );
    return {};
  },
});
