// The envelope's JSON text: written member by member (the command-style payload serialized once),
// it must equal what JSON.stringify gives for the provider's layout.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { okText, quote } from '../../src/infra/transport/envelope.js';

it('writes the REST envelope: code first, then message, matches and data', () => {
  const data = [{ id: 1, name: 'a "quoted" name' }];
  assert.equal(okText({ message: 'Done', data, matches: 7, top: { apiusers: data } }, 'rest'), JSON.stringify({ code: 'OK', message: 'Done', matches: 7, data }));
  assert.equal(okText({ message: 'Nothing' }, 'rest'), '{"code":"OK","message":"Nothing"}');
});

it('writes the command-style envelope with the top-level keys before data, the shared payload once', () => {
  const apiuser = { id: 3, permissions: ['*'], active: true };
  const text = okText({ message: 'API User Retrieved Successfully', data: apiuser, top: { apiuser } }, 'cmd');
  assert.equal(text, JSON.stringify({ code: 'OK', message: 'API User Retrieved Successfully', apiuser, data: apiuser }));
  const other = okText({ message: 'm', data: { a: 1 }, matches: 2, top: { token: 'x', sessionId: 'x', missing: undefined, code: 'NO', matches: 9 } }, 'cmd');
  assert.equal(other, JSON.stringify({ code: 'OK', message: 'm', matches: 2, token: 'x', sessionId: 'x', data: { a: 1 } }));
  // A top-level `data` never doubles the key.
  assert.deepEqual(JSON.parse(okText({ message: 'm', data: 1, top: { data: 2 } }, 'cmd')), { code: 'OK', message: 'm', data: 1 });
  assert.deepEqual(JSON.parse(okText({ message: 'm', top: { data: 2 } }, 'cmd')), { code: 'OK', message: 'm', data: 2 });
});

it('quotes messages and key names exactly as JSON.stringify does, whatever they hold', () => {
  const odd = ['', 'plain', 'a "quoted" word', 'back\\slash', 'tab\tnew\nline', '\u0000\u001f\u007f', 'é ü 中', '\u2028\u2029', '\ud83d\ude00', 'lone \ud83d', 'lone \ude00'];
  for (const s of odd) {
    assert.equal(quote(s), JSON.stringify(s), `quote(${JSON.stringify(s)})`);
    assert.equal(okText({ message: s, top: { [s || 'k']: 1 } }, 'cmd'), JSON.stringify({ code: 'OK', message: s, [s || 'k']: 1 }));
  }
});
