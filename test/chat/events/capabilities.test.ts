// Event types a client capability turns on or off whoever produces them (EventQueue.wantsType):
// realm_linkifiers only with linkifier_url_template; the legacy settings events only without
// user_settings_object. Notices published straight into a hub, as the producers do after a commit.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EventHub, type Notice } from '../../../src/chat/events/hub.js';
import { ManualClock } from '../../../src/platform/clock.js';
import { createLogger } from '../../../src/platform/log.js';

function queueWith(hub: EventHub, capabilities: Record<string, boolean>) {
  return hub.create({ userId: 1, realmId: 1, eventTypes: null, narrow: [], allPublicStreams: false, applyMarkdown: false, clientGravatar: false, capabilities });
}

const notice = (type: string): Notice => ({ type, userIds: [1], render: () => ({ type }) });

it('gates realm_linkifiers and the legacy settings events by client capability', () => {
  const hub = new EventHub(new ManualClock(0), createLogger('error'), { sweepEveryMs: 0 });
  const modern = queueWith(hub, { linkifier_url_template: true, user_settings_object: true });
  const legacy = queueWith(hub, {});
  hub.publish(['realm_linkifiers', 'update_display_settings', 'update_global_notifications', 'user_settings'].map(notice));
  assert.deepEqual(
    modern.events.map((e) => e.type),
    ['realm_linkifiers', 'user_settings'],
  );
  assert.deepEqual(
    legacy.events.map((e) => e.type),
    ['update_display_settings', 'update_global_notifications', 'user_settings'],
  );
  hub.close();
});
