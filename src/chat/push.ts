// Push notifications leave Keel through a PushService: the one src/app.ts builds from --push-url
// speaks the HTTP API of Zulip's push notification service (the "bouncer", zerver/lib/remote_server.py):
// POST <url>/api/v1/remotes/push/<endpoint>, HTTP Basic with the server's organization id and key,
// form fields for register and unregister, a JSON body for test_notification. Its failures become
// the errors Zulip's server answers for them.
import type { PushConfig } from '../config/config.js';
import type { Logger } from '../platform/log.js';
import { ZULIP_VERSION } from './version.js';
import { pushBouncerRefused, pushBouncerServerError, pushBouncerUnexpected, pushBouncerUnreachable, pushDeviceUnknownToBouncer } from './errors.js';

/** Zulip's PushDeviceToken kinds. */
export const PUSH_KIND = { apns: 1, fcm: 2 } as const;

/** Who a registration or a notification is for, as the bouncer knows them. */
export interface PushIdentity {
  userId: number;
  userUuid: string;
  realmUuid: string;
}

export interface PushDevice {
  kind: number;
  token: string;
  iosAppId: string | null;
}

export interface PushService {
  register(who: PushIdentity, device: PushDevice): Promise<void>;
  unregister(who: PushIdentity, device: Pick<PushDevice, 'kind' | 'token'>): Promise<void>;
  /** A test notification to one device; basePayload is Zulip's get_base_payload (server, realm, user). */
  testNotification(who: PushIdentity, device: PushDevice, basePayload: Record<string, unknown>): Promise<void>;
}

/** A push service that answers this slowly is treated as unreachable (Zulip's PushBouncerSession: 30 s). */
const TIMEOUT_MS = 30_000;

export class BouncerPushService implements PushService {
  private readonly config: PushConfig;
  private readonly log: Logger;
  private readonly timeoutMs: number;

  constructor(config: PushConfig, log: Logger, timeoutMs = TIMEOUT_MS) {
    this.config = config;
    this.log = log;
    this.timeoutMs = timeoutMs;
  }

  async register(who: PushIdentity, device: PushDevice): Promise<void> {
    const form: Record<string, string> = {
      server_uuid: this.config.orgId,
      user_uuid: who.userUuid,
      realm_uuid: who.realmUuid,
      user_id: String(who.userId),
      token: device.token,
      token_kind: String(device.kind),
    };
    if (device.kind === PUSH_KIND.apns && device.iosAppId !== null) form.ios_app_id = device.iosAppId;
    await this.send('push/register', new URLSearchParams(form).toString(), 'application/x-www-form-urlencoded');
  }

  async unregister(who: PushIdentity, device: Pick<PushDevice, 'kind' | 'token'>): Promise<void> {
    const form = {
      server_uuid: this.config.orgId,
      realm_uuid: who.realmUuid,
      user_uuid: who.userUuid,
      user_id: String(who.userId),
      token: device.token,
      token_kind: String(device.kind),
    };
    await this.send('push/unregister', new URLSearchParams(form).toString(), 'application/x-www-form-urlencoded');
  }

  async testNotification(who: PushIdentity, device: PushDevice, basePayload: Record<string, unknown>): Promise<void> {
    const body = {
      realm_uuid: who.realmUuid,
      user_uuid: who.userUuid,
      user_id: who.userId,
      token: device.token,
      token_kind: device.kind,
      base_payload: basePayload,
    };
    await this.send('push/test_notification', JSON.stringify(body), 'application/json');
  }

  private async send(endpoint: string, body: string, contentType: string): Promise<Record<string, unknown>> {
    const url = new URL(`api/v1/remotes/${endpoint}`, this.config.url);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        body,
        headers: {
          'content-type': contentType,
          'user-agent': `ZulipServer/${ZULIP_VERSION}`,
          authorization: `Basic ${Buffer.from(`${this.config.orgId}:${this.config.orgKey}`).toString('base64')}`,
        },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const name = (err as Error).name === 'TimeoutError' ? 'Timeout' : 'ConnectionError';
      this.log.warn('push notification service unreachable', { endpoint, error: (err as Error).message });
      throw pushBouncerUnreachable({ reason: name });
    }
    const text = await res.text().catch(() => '');
    if (res.status >= 500) {
      this.log.warn('push notification service failed', { endpoint, status: res.status });
      throw pushBouncerServerError({ status: String(res.status) });
    }
    let parsed: Record<string, unknown> | undefined;
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
    } catch {
      parsed = undefined;
    }
    if (res.status >= 400) {
      if (endpoint === 'push/test_notification' && parsed?.code === 'INVALID_REMOTE_PUSH_DEVICE_TOKEN') throw pushDeviceUnknownToBouncer();
      if (typeof parsed?.msg !== 'string') throw pushBouncerUnexpected({ status: String(res.status) });
      this.log.info('push notification service refused', { endpoint, status: res.status, code: parsed.code });
      throw pushBouncerRefused({ msg: parsed.msg.slice(0, 1000) });
    }
    if (res.status !== 200 || !parsed) throw pushBouncerUnexpected({ status: String(res.status) });
    return parsed;
  }
}
