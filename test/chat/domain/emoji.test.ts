// Unit tests of the emoji table: Zulip's names, aliases and codes (tools/setup/emoji/emoji_names.py as
// Zulip 10.2 builds it), not emoji-datasource's short names, and Zulip's check_emoji_request rules.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkEmojiRequest, emojiByChars, emojiByName, emojiNamed, emojiPattern, unicodeEmojiCodeToNames, unicodeEmojiNameCount } from '../../../src/chat/domain/emoji.js';

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return 'accepted';
}

it('names emoji as Zulip does', () => {
  assert.equal(emojiByName('smile')?.code, '1f642');
  assert.equal(emojiByName('big_smile')?.code, '1f604');
  assert.equal(emojiByName('smiling_face')?.code, '263a');
  assert.equal(emojiByName('+1')?.code, '1f44d');
  assert.equal(emojiByName('thumbs_up')?.code, '1f44d');
  assert.equal(emojiByName('like')?.code, '1f44d');
  assert.equal(emojiByName('check')?.code, '2705');
  assert.equal(emojiByName('check_mark')?.code, '2714');
  assert.equal(emojiByName('working_on_it')?.code, '1f6e0');
  assert.equal(emojiByName('tools')?.code, '1f6e0');
  assert.equal(emojiByName('folded_hands')?.code, '1f64f');
  assert.equal(emojiByName('pray')?.code, '1f64f');
  assert.equal(emojiByName('octopus')?.code, '1f419');
  assert.equal(emojiByName('hash')?.code, '0023-20e3');
  assert.equal(emojiByName('flag_france')?.code, '1f1eb-1f1f7');
  // An emoji is named by the name it was asked by, canonical or alias.
  assert.deepEqual(emojiByName('thumbs_up'), { name: 'thumbs_up', code: '1f44d' });
});

it('knows no names Zulip lacks', () => {
  // emoji-datasource's short names that Zulip does not have.
  for (const name of ['slightly_smiling_face', 'grinning_face', 'thumbsup', 'heavy_check_mark', 'hammer_and_wrench_x', 'SMILE', 'smile ', '']) assert.equal(emojiByName(name), undefined, name);
  // Clock faces (but 1f557) and lone skin tones are left out, as in Zulip.
  assert.equal(emojiByChars('🕐'), undefined);
  assert.equal(emojiByChars('🏽'), undefined);
});

it('has as many emoji and names as Zulip 10.2, each code with its canonical name first', () => {
  const codes = unicodeEmojiCodeToNames();
  assert.equal(Object.keys(codes).length, 1875);
  assert.equal(unicodeEmojiNameCount(), 3308);
  assert.deepEqual(codes['1f44d'], ['+1', 'thumbs_up', 'like']);
  assert.deepEqual(codes['1f642'], ['smile']);
  assert.deepEqual(codes['1f6e0'], ['working_on_it', 'hammer_and_wrench', 'tools']);
  // Every name is unique across the table.
  const names = Object.values(codes).flat();
  assert.equal(new Set(names).size, names.length);
});

it('reads typed emoji under their canonical names, with or without FE0F', () => {
  assert.deepEqual(emojiByChars('😄'), { name: 'big_smile', code: '1f604' });
  assert.deepEqual(emojiByChars('🙂'), { name: 'smile', code: '1f642' });
  assert.deepEqual(emojiByChars('❤️'), { name: 'heart', code: '2764' });
  assert.deepEqual(emojiByChars('❤'), { name: 'heart', code: '2764' });
  const found = [...'a 👨‍👩‍👧 b 🇫🇷 1️⃣ #️⃣ 1 # *'.matchAll(emojiPattern())].map((m) => emojiByChars(m[0])?.name);
  assert.deepEqual(found, ['family_man_woman_girl', 'flag_france', 'one', 'hash']);
});

it('matches every emoji of the table whole, bare or with FE0F after its first code point', () => {
  for (const code of Object.keys(unicodeEmojiCodeToNames())) {
    const cps = code.split('-').map((h) => String.fromCodePoint(parseInt(h, 16)));
    for (const typed of [cps.join(''), [cps[0], '\uFE0F', ...cps.slice(1)].join('')]) {
      const found = [...`x${typed}y`.matchAll(emojiPattern())].map((m) => [m[0], emojiByChars(m[0])?.code]);
      assert.deepEqual(found, [[typed, code]], code);
    }
  }
});

it('takes a sequence the table lacks whole, so it stays text as in Zulip (skin tones, unknown ZWJ sequences)', () => {
  const found = [...'👍🏽 🍋‍🟪 🍋‍🟩 🧑🏽‍🛴‍↩️ 🤷‍♀️'.matchAll(emojiPattern())].map((m) => [m[0], emojiByChars(m[0])?.name]);
  assert.deepEqual(found, [
    ['👍🏽', undefined],
    ['🍋‍🟪', undefined],
    ['🍋‍🟩', 'lime'],
    ['🧑🏽‍🛴‍↩️', undefined],
    ['🤷‍♀️', 'woman_shrugging'],
  ]);
});

it('checks name, code and type as Zulip check_emoji_request does', () => {
  assert.deepEqual(checkEmojiRequest('thumbs_up', undefined, undefined), { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
  assert.deepEqual(checkEmojiRequest('+1', '1f44d', 'unicode_emoji'), { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
  assert.equal(
    refusal(() => checkEmojiRequest('slightly_smiling_face', undefined, undefined)),
    "Emoji 'slightly_smiling_face' does not exist",
  );
  assert.equal(
    refusal(() => checkEmojiRequest('smile', '1f604', undefined)),
    'Invalid emoji name.',
  );
  // A code the table does not name is no emoji, even when its characters are (a clock face, a skin tone).
  assert.equal(
    refusal(() => checkEmojiRequest('smile', '1f550', undefined)),
    'Invalid emoji code.',
  );
  assert.equal(
    refusal(() => checkEmojiRequest('smile', '1f3fd', undefined)),
    'Invalid emoji code.',
  );
  assert.equal(
    refusal(() => checkEmojiRequest('smile', '1F642', undefined)),
    'Invalid emoji code.',
  );
  assert.equal(
    refusal(() => checkEmojiRequest('smile', '1f642', 'sticker')),
    'Invalid emoji type.',
  );
});

it("takes the seed's service_extra_emoji as Zulip's zulip_extra_emoji", () => {
  const zulip = { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' };
  assert.deepEqual(emojiNamed('zulip'), zulip);
  assert.deepEqual(checkEmojiRequest('zulip', 'zulip', 'service_extra_emoji'), zulip);
  assert.deepEqual(checkEmojiRequest('zulip', undefined, 'service_extra_emoji'), zulip);
  assert.deepEqual(checkEmojiRequest('zulip', 'zulip', 'zulip_extra_emoji'), zulip);
  assert.equal(
    refusal(() => checkEmojiRequest('smile', 'zulip', 'service_extra_emoji')),
    'Invalid emoji name.',
  );
  assert.equal(
    refusal(() => checkEmojiRequest('zulip', '1f642', 'service_extra_emoji')),
    'Invalid emoji code.',
  );
});
