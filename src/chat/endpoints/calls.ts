// Video calls: a BigBlueButton call's join link (Zulip 10.2's GET /calls/bigbluebutton/create), when
// the server has a BigBlueButton server (--bigbluebutton-url and --bigbluebutton-secret).
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { bigBlueButtonNotConfigured } from '../errors.js';
import { joinPath, newMeetingId, signMeeting } from '../domain/video-calls.js';

export const createBigBlueButtonCall = defineEndpoint({
  method: 'GET',
  path: '/calls/bigbluebutton/create',
  summary: 'Create BigBlueButton video call',
  auth: 'user',
  params: Type.Object({ meeting_name: Type.String(), voice_only: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const bbb = call.services.bigBlueButton;
    if (!bbb) throw bigBlueButtonNotConfigured();
    const signed = signMeeting(bbb.secret, { meeting_id: newMeetingId(), name: p.meeting_name, lock_settings_disable_cam: p.voice_only, moderator: me.id });
    return { url: joinPath(signed) };
  },
});
