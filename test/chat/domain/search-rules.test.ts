// Unit: Zulip's search rules: stems (Snowball English), Zulip's stop words, quoted phrases, what
// the index holds for a message, and which words are highlighted.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { escapeHtml, highlightHtml, highlightWords, parseSearch } from '../../../src/chat/domain/search.js';
import { lexeme, lexemes, MAX_WORD_LENGTH, searchCondition, searchText, STOP_WORDS } from '../../../src/platform/db/fulltext.js';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, DummyDriver } from 'kysely';

it('stems words as PostgreSQL english_stem does; words with digits stay whole', () => {
  for (const w of ['deploy', 'deploys', 'deploying', 'deployed', 'Deploying']) assert.equal(lexeme(w), 'deploy');
  assert.equal(lexeme('running'), 'run');
  assert.equal(lexeme('Generously'), 'generous');
  assert.equal(lexeme('v2'), 'v2');
  assert.equal(lexeme('2025'), '2025');
  assert.equal(lexeme('x'.repeat(MAX_WORD_LENGTH + 1)), null);
});

it("drops Zulip's stop words (PostgreSQL's English list and single letters)", () => {
  for (const w of ['the', 'The', 'and', 'is', 'x', 'b', 'don', 'should']) assert.equal(lexeme(w), null, w);
  assert.ok(!STOP_WORDS.has('deploy'));
  assert.deepEqual(lexemes('The server is deploying and the servers deployed'), ['server', 'deploy']);
});

it('indexes the topic and the text of the rendered HTML, not tags, attributes or entities', () => {
  const text = searchText('Release plans', '<p>See <a href="https://example.com/hidden">the docs</a> &amp; <span class="user-mention" data-user-id="7">@Iago</span></p>');
  assert.deepEqual(text.split(' '), ['releas', 'plan', 'see', 'doc', 'iago']);
  assert.equal(searchText('', '<p>the a an</p>'), '');
});

it('reads every word of the operand as a lexeme, and quoted text as a phrase too', () => {
  assert.deepEqual(parseSearch('Deploying  "the new Servers" now'), { lexemes: ['deploy', 'new', 'server'], phrases: ['the new Servers'] });
  assert.deepEqual(parseSearch('foo-bar x@y.com'), { lexemes: ['foo', 'bar', 'com'], phrases: [] });
  // An unclosed quote is punctuation; an empty pair is no phrase (Zulip's "[^"]+").
  assert.deepEqual(parseSearch('"open quote'), { lexemes: ['open', 'quot'], phrases: [] });
  assert.deepEqual(parseSearch('"" the'), { lexemes: [], phrases: [] });
});

it('highlights the words whose stem is searched for, in text only, never stop words', () => {
  const words = highlightWords(parseSearch('deploy the link'));
  const html = '<p>Deploying &amp; <a href="http://link.example" title="link">the links</a> deploys</p>';
  assert.equal(
    highlightHtml(html, words),
    '<p><span class="highlight">Deploying</span> &amp; <a href="http://link.example" title="link">the <span class="highlight">links</span></a> <span class="highlight">deploys</span></p>',
  );
  assert.equal(highlightHtml(html, new Set()), html);
  assert.equal(highlightHtml(escapeHtml('a <b> & "Links"'), words), 'a &lt;b&gt; &amp; &quot;<span class="highlight">Links</span>&quot;');
  // An unclosed tag is text; a bare & is punctuation; letters outside the BMP are word letters.
  assert.equal(
    highlightHtml('a < link &x link&amp;links 𝐀link', words),
    'a < <span class="highlight">link</span> &x <span class="highlight">link</span>&amp;<span class="highlight">links</span> 𝐀link',
  );
  assert.equal(highlightHtml('<p>Ünïcode cafés</p>', highlightWords(parseSearch('ÜNÏCODE'))), '<p><span class="highlight">Ünïcode</span> cafés</p>');
});

it('builds engine-specific conditions from lexemes, phrases as escaped LIKE patterns', () => {
  const compile = (engine: 'sqlite' | 'postgres', operand: string) => {
    const k = new Kysely<Record<string, never>>({
      dialect:
        engine === 'sqlite'
          ? {
              createAdapter: () => new SqliteAdapter(),
              createDriver: () => new DummyDriver(),
              createIntrospector: (db) => new SqliteIntrospector(db),
              createQueryCompiler: () => new SqliteQueryCompiler(),
            }
          : {
              createAdapter: () => new PostgresAdapter(),
              createDriver: () => new DummyDriver(),
              createIntrospector: (db) => new PostgresIntrospector(db),
              createQueryCompiler: () => new PostgresQueryCompiler(),
            },
    });
    return searchCondition(engine, parseSearch(operand)).compile(k);
  };
  const lite = compile('sqlite', 'alpha "Beta 100%_"');
  assert.match(lite.sql, /messages_fts match \?/);
  assert.deepEqual(lite.parameters, ['"alpha" "beta" "100"', '%beta 100\\%\\_%', '%beta 100\\%\\_%']);
  const pg = compile('postgres', 'alpha "Beta 100%_"');
  assert.match(pg.sql, /search_tsv @@ \$1::tsquery/);
  assert.deepEqual(pg.parameters, ["'alpha' & 'beta' & '100'", '%beta 100\\%\\_%', '%beta 100\\%\\_%']);
  // Nothing to look for (stop words only) matches nothing, as plainto_tsquery's empty query.
  assert.equal(compile('sqlite', 'the a').sql, '1 = 0');
});
