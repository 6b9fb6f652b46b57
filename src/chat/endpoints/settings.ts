// Personal settings: PATCH /settings (preferences, full name, email and password) and the realm's
// defaults for new users, PATCH /realm/user_settings_defaults (administrators). Each changed
// setting is one event after the commit, as Zulip sends them.
import Type, { type TSchema } from 'typebox';
import { defineEndpoint, requireUser, type ChatCall, type Endpoint } from '../endpoint.js';
import { adminRequired, alreadyHasAccount, invalidAddress, passwordTooWeak, wrongPassword } from '../errors.js';
import { isAdmin } from '../domain/roles.js';
import { checkFullName, setApiEmailForVisibility, userByDeliveryEmail, userById } from '../domain/users.js';
import { hashPassword, verifyPassword } from '../../platform/auth/passwords.js';
import { checkSetting, DEFAULTS_SETTING_NAMES, realmDefaultsStored, saveRealmDefaults, SETTING_NAMES, SETTINGS, settingOf, storedSettings, type SettingValue } from '../domain/user-settings.js';
import { checkNameUnique, checkOwnEmailChangeAllowed, ownNameChangeAllowed } from '../domain/realm-rules.js';
import { realmUserUpdateNotice } from '../events/notices.js';
import { realmDefaultsNotice, userSettingNotices } from '../events/pref-notices.js';
import type { Notice } from '../events/hub.js';
import { emailVisibilityNotices } from '../events/email-notices.js';
import { exportConsentNotice } from '../domain/realm-exports.js';

function settingParams(names: string[]): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const name of names) {
    const kind = SETTINGS[name].kind;
    out[name] = Type.Optional(kind === 'boolean' ? Type.Boolean() : kind === 'integer' ? Type.Integer() : Type.String());
  }
  return out;
}

/** The settings a request carries, each checked; nothing is written before all pass. */
function requested(p: Record<string, unknown>, names: string[]): [string, SettingValue][] {
  const out: [string, SettingValue][] = [];
  for (const name of names) if (p[name] !== undefined) out.push([name, checkSetting(name, p[name] as SettingValue)]);
  return out;
}

/** Zulip's password rule (PASSWORD_MIN_LENGTH 6, and not guessable: one repeated character is). */
function checkPasswordStrength(password: string): void {
  if ([...password].length < 6 || new Set(password).size < 3) throw passwordTooWeak();
}

const EMAIL = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

const updateSettingsParams = Type.Object({
  full_name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  old_password: Type.String({ default: '' }),
  new_password: Type.String({ default: '' }),
  ...settingParams(SETTING_NAMES),
});

export const updateSettings = defineEndpoint({
  method: 'PATCH',
  path: '/settings',
  summary: 'Update settings',
  auth: 'user',
  params: updateSettingsParams,
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, log } = call.services;
    const wanted = requested(p as Record<string, unknown>, SETTING_NAMES);
    // A member's name change in a realm that disables them is skipped, unchecked, as Zulip does.
    const fullName = p.full_name === undefined || !ownNameChangeAllowed(call.realm, me) ? undefined : checkFullName(p.full_name);
    if (p.new_password !== '') {
      if (!me.password_hash || !(await verifyPassword(me.password_hash, p.old_password))) throw wrongPassword();
      checkPasswordStrength(p.new_password);
    }
    if (fullName !== undefined && fullName !== me.full_name) await checkNameUnique(db.kysely, call.realm, fullName, me.id);
    const newEmail = p.email?.trim();
    if (newEmail !== undefined && newEmail !== me.delivery_email) {
      checkOwnEmailChangeAllowed(call.realm, me);
      if (!EMAIL.test(newEmail)) throw invalidAddress();
      if (await userByDeliveryEmail(db.kysely, call.realm.id, newEmail)) throw alreadyHasAccount();
    }
    const passwordHash = p.new_password !== '' ? await hashPassword(p.new_password) : null;
    const changed: [string, SettingValue][] = [];
    let nameChanged = false;
    let visibilityBefore = 0;
    let newApiEmail: string | null = null;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const user = (await userById(trx, call.realm.id, me.id))!;
          const settings = storedSettings(user.settings);
          visibilityBefore = settingOf(user, 'email_address_visibility') as number;
          let timezone: string | undefined;
          for (const [name, value] of wanted) {
            // Zulip announces (and records) only real changes.
            if (settingOf(user, name) === value) continue;
            changed.push([name, value]);
            if (name === 'timezone') timezone = value as string;
            else settings[name] = value;
          }
          nameChanged = fullName !== undefined && fullName !== user.full_name;
          if (changed.length || nameChanged || passwordHash) {
            await trx
              .updateTable('chat_users')
              .set({
                settings: JSON.stringify(settings),
                ...(timezone !== undefined ? { timezone } : {}),
                ...(nameChanged ? { full_name: fullName } : {}),
                ...(passwordHash ? { password_hash: passwordHash } : {}),
              })
              .where('id', '=', me.id)
              .execute();
          }
          // A new password logs out every browser (Zulip's session auth hash changes with it; this
          // request came by API key, so no session of its own stays).
          if (passwordHash) await trx.deleteFrom('chat_sessions').where('user_id', '=', me.id).execute();
          // A hidden address shows as the placeholder, to everyone (Zulip's get_display_email_address).
          const visibility = changed.find(([n]) => n === 'email_address_visibility');
          if (visibility) newApiEmail = await setApiEmailForVisibility(trx, user, call.realm.email_host, visibility[1] as number);
          // Turning synchronisation off deletes the stored drafts, without events (Zulip's rule).
          if (changed.some(([n, v]) => n === 'enable_drafts_synchronization' && v === false)) {
            await trx.deleteFrom('drafts').where('user_id', '=', me.id).execute();
          }
        }),
      () => settingsNotices(call, changed, nameChanged ? fullName! : undefined, visibilityBefore, newApiEmail),
    );
    // Keel sends no mail, so the confirmation Zulip mails to the new address cannot be delivered:
    // the address stays as it is, and the request is logged for an operator.
    if (newEmail !== undefined && newEmail !== me.delivery_email) log.info('chat email change requested', { userId: me.id, newEmail });
    return {};
  },
});

async function settingsNotices(call: ChatCall, changed: [string, SettingValue][], fullName: string | undefined, visibilityBefore: number, newApiEmail: string | null): Promise<Notice[]> {
  const me = requireUser(call);
  const db = call.services.db.kysely;
  const out: Notice[] = [];
  if (fullName !== undefined) out.push(...(await realmUserUpdateNotice(db, call.realm.id, me.id, { full_name: fullName })));
  for (const [name, value] of changed) {
    out.push(...userSettingNotices(me, name, value));
    // Others see a user's time zone in the user object.
    if (name === 'timezone') out.push(...(await realmUserUpdateNotice(db, call.realm.id, me.id, { timezone: value })));
    if (name === 'email_address_visibility') out.push(...(await emailVisibilityNotices(db, me, visibilityBefore, value as number, newApiEmail)));
    // Administrators see who consents to their private data being exported (Zulip 10, feature level 312).
    if (name === 'allow_private_data_export') out.push(...(await exportConsentNotice(db, call.realm.id, me.id, value === true)));
  }
  return out;
}

export const updateRealmUserSettingsDefaults = defineEndpoint({
  method: 'PATCH',
  path: '/realm/user_settings_defaults',
  summary: 'Update realm-level defaults of user settings',
  auth: 'user',
  params: Type.Object(settingParams(DEFAULTS_SETTING_NAMES)),
  async handler(call, p) {
    if (!isAdmin(requireUser(call).role)) throw adminRequired();
    const { db, events } = call.services;
    const wanted = requested(p as Record<string, unknown>, DEFAULTS_SETTING_NAMES);
    const changed: [string, SettingValue][] = [];
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const stored = await realmDefaultsStored(trx, call.realm.id);
          for (const [name, value] of wanted) {
            if ((stored[name] ?? SETTINGS[name].fallback) === value) continue;
            stored[name] = value;
            changed.push([name, value]);
          }
          if (changed.length) await saveRealmDefaults(trx, call.realm.id, stored);
        }),
      async () => {
        const users = await db.kysely.selectFrom('chat_users').select('id').where('realm_id', '=', call.realm.id).where('is_active', '=', 1).execute();
        return changed.map(([name, value]) =>
          realmDefaultsNotice(
            users.map((u) => Number(u.id)),
            name,
            value,
          ),
        );
      },
    );
    return {};
  },
});

/**
 * PATCH /settings/notifications and PATCH /settings/display: the endpoints Zulip split its settings
 * between before feature level 80, kept by Zulip 10.2 (zproject/urls.py) as aliases of PATCH
 * /settings, with its parameters and answers; the Python client's update_notification_settings
 * still calls the first.
 */
export const updateNotificationSettingsLegacy = defineEndpoint({
  ...(updateSettings as unknown as Endpoint<typeof updateSettingsParams>),
  path: '/settings/notifications',
  summary: 'Update settings (legacy notification settings address)',
});

export const updateDisplaySettingsLegacy = defineEndpoint({
  ...(updateSettings as unknown as Endpoint<typeof updateSettingsParams>),
  path: '/settings/display',
  summary: 'Update settings (legacy display settings address)',
});
