// SHA-512 crypt against the test vectors published with Ulrich Drepper's SHA-crypt specification
// (the same strings glibc and libxcrypt check), and the random-salt hash's round trip and format.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { hashSha512Crypt, sha512Crypt } from '../../../src/platform/auth/sha512-crypt.js';

const VECTORS: [setting: string, password: string, hash: string][] = [
  ['$6$saltstring', 'Hello world!', '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1'],
  ['$6$rounds=10000$saltstringsaltstring', 'Hello world!', '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.'],
  ['$6$rounds=5000$toolongsaltstring', 'This is just a test', '$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0'],
  [
    '$6$rounds=1400$anotherlongsaltstring',
    'a very much longer text to encrypt.  This one even stretches over morethan one line.',
    '$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1',
  ],
  ['$6$rounds=77777$short', 'we have a short salt string but not a short password', '$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0'],
  ['$6$rounds=123456$asaltof16chars..', 'a short string', '$6$rounds=123456$asaltof16chars..$BtCwjqMJGx5hrJhZywWvt0RLE8uZ4oPwcelCjmw2kSYu.Ec6ycULevoBK25fs2xXgMNrCzIMVcgEJAstJeonj1'],
  // Rounds below the minimum are raised to 1000, and the hash says so.
  ['$6$rounds=10$roundstoolow', 'the minimum number is still observed', '$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX.'],
];

it('matches the specification test vectors', () => {
  for (const [setting, password, hash] of VECTORS) assert.equal(sha512Crypt(password, setting), hash, setting);
});

it('verifies by hashing again with the stored hash as the setting', () => {
  const [, password, hash] = VECTORS[1];
  assert.equal(sha512Crypt(password, hash), hash);
  assert.notEqual(sha512Crypt('Hello world?', hash), hash);
});

it('makes "$6$" hashes with a random 16-character salt that verify', () => {
  const a = hashSha512Crypt('pässwörd');
  const b = hashSha512Crypt('pässwörd');
  assert.match(a, /^\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
  assert.notEqual(a, b, 'each hash has its own salt');
  assert.equal(sha512Crypt('pässwörd', a), a);
  assert.throws(() => sha512Crypt('x', '$5$sha256'), /SHA-512/);
});
