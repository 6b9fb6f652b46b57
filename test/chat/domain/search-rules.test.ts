// Unit: reading a search operand into words and phrases, folding, and highlighting matched words.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { escapeHtml, highlightHtml, highlightWords, parseSearch } from '../../../src/chat/domain/search.js';
import { FOLD, foldText, searchCondition } from '../../../src/platform/db/fulltext.js';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, DummyDriver } from 'kysely';

it('reads words (AND) and quoted phrases; punctuation splits words into phrases', () => {
  assert.deepEqual(parseSearch('Hello  "exact Phrase" world'), [['hello'], ['exact', 'phrase'], ['world']]);
  assert.deepEqual(parseSearch('foo-bar x@y.com'), [
    ['foo', 'bar'],
    ['x', 'y', 'com'],
  ]);
  assert.deepEqual(parseSearch('"" ... '), []);
  assert.deepEqual(parseSearch('Café'), [['cafe']]);
});

it('folds Latin diacritics with one fixed table (the index uses the same one)', () => {
  assert.equal(FOLD.from.length, FOLD.to.length);
  assert.equal(foldText('ÉLAN Ñandú'), 'elan nandu');
  // Letters without a decomposition stay themselves.
  assert.equal(foldText('Łódź'), 'łodz');
});

it('highlights matched words in text only, never inside tags or entities', () => {
  const words = highlightWords(parseSearch('cafe AMP link'));
  const html = '<p>Café &amp; <a href="http://link.example" title="link">a link</a></p>';
  assert.equal(highlightHtml(html, words), '<p><span class="highlight">Café</span> &amp; <a href="http://link.example" title="link">a <span class="highlight">link</span></a></p>');
  assert.equal(highlightHtml(html, new Set()), html);
  assert.equal(highlightHtml(escapeHtml('a <b> & "link"'), words), 'a &lt;b&gt; &amp; &quot;<span class="highlight">link</span>&quot;');
});

it('builds engine-specific conditions from tokens only', () => {
  const compile = (engine: 'sqlite' | 'postgres') => {
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
    return searchCondition(engine, parseSearch('alpha "beta gamma"')).compile(k);
  };
  const lite = compile('sqlite');
  assert.match(lite.sql, /messages_fts match \?/);
  assert.deepEqual(lite.parameters, ['"alpha" AND "beta gamma"']);
  const pg = compile('postgres');
  assert.match(pg.sql, /search_tsv @@ to_tsquery/);
  assert.deepEqual(pg.parameters, ["('alpha') & ('beta' <-> 'gamma')"]);
});
