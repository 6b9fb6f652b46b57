// The Infra error catalog (src/infra/errors.ts): every entry pinned (a changed code, text or status is
// a wire change and must show here), and no message written anywhere else.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { catalogEntries, infraErrors, rateLimited, RateLimited } from '../../src/infra/errors.js';
import { errorBody } from '../../src/infra/transport/envelope.js';

const PINNED: Record<string, [code: string, status: number, template: string]> = {
  accessDenied: ['ACCESS_DENIED', 200, 'Access Denied'],
  permissionMissing: ['ACCESS_DENIED', 200, 'Access Denied: this API user lacks the permission {cmd}'],
  mayNotManage: ['ACCESS_DENIED', 200, 'Access Denied: {what} holds permissions this caller does not, so this caller may not change it'],
  mayNotGrant: ['ACCESS_DENIED', 200, 'Access Denied: cannot grant "{permission}", which this caller does not hold'],
  rateLimited: ['RATE_LIMIT', 200, 'Rate limit exceeded: try again in {seconds} {unit}'],
  invalidParameter: ['FAULT', 200, 'Invalid parameter {name}: {problem}'],
  missingParameter: ['FAULT', 200, 'Missing parameter {name}'],
  missingParameterDetail: ['FAULT', 200, 'Missing parameter {name}: {detail}'],
  missingDomain: ['FAULT', 200, 'Missing parameter {name}: the domain id (or name)'],
  invalidParameters: ['FAULT', 200, 'Invalid parameters'],
  customerNotFound: ['ERROR', 200, 'Could not find customer'],
  apiUserNotFound: ['ERROR', 200, 'Could not find API user'],
  domainNotFound: ['ERROR', 200, 'Could not find domain'],
  namedDomainNotFound: ['ERROR', 200, 'Could not find domain {domain}'],
  recordNotFound: ['ERROR', 200, 'Could not find record'],
  recordIdNotFound: ['ERROR', 200, 'Could not find record {id}'],
  recordNotInDomain: ['ERROR', 200, 'Could not find record {id} in domain {domainId}'],
  apiUserChanged: ['ERROR', 200, 'API user {id} changed while this request ran; nothing was changed, try again'],
  unknownPath: ['ERROR', 200, 'Unknown path {path}: the API lives under /api/rest/v2.10/'],
  unknownRestPath: ['ERROR', 200, 'Unknown REST path {method} {path}'],
  methodNotAllowed: ['ERROR', 200, 'Method {method} is not allowed on {path}; use {allowed}'],
  unknownCommand: ['ERROR', 200, 'Unknown command: {cmd}'],
  malformedTarget: ['ERROR', 200, 'Malformed request target'],
  malformedPercent: ['ERROR', 200, 'Malformed percent-encoding in the path segment {segment}'],
  malformedJson: ['ERROR', 200, 'Malformed JSON in the request body: {reason}'],
  bodyNotObject: ['ERROR', 200, 'Malformed request body: expected a JSON object'],
  bodyTooLarge: ['ERROR', 200, 'Request body too large: the limit is {limit} bytes'],
  bodyTooLargeOpen: ['ERROR', 200, 'Request body too large: the limit is {limit} bytes without valid credentials in the headers (HTTP Basic, a Bearer JWT or the session cookie), {credentialedLimit} bytes with them'],
  malformedHttp: ['ERROR', 400, 'Malformed HTTP request ({reason})'],
  internalError: ['FAULT', 200, 'Internal server error'],
};

it('holds exactly the pinned entries: code, HTTP status and message template', () => {
  const actual = Object.fromEntries(catalogEntries().map((e) => [e.key, [e.code, e.status, e.template]]));
  assert.deepEqual(actual, PINNED);
  for (const [key, entry] of Object.entries(infraErrors)) assert.equal(entry.key, key, `${key} is filed under its own name`);
});

it('renders every placeholder and declares the extra envelope keys of its code', () => {
  for (const e of catalogEntries()) {
    const names = [...e.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const values = Object.fromEntries(names.map((n) => [n, `<${n}>`]));
    const err = e(values as never);
    assert.equal(err.code, e.code);
    assert.equal(err.entry, e);
    assert.ok(!/\{\w+\}/.test(err.message), `${e.key} leaves a placeholder: ${err.message}`);
    for (const n of names) assert.ok(err.message.includes(`<${n}>`), `${e.key} renders {${n}}`);
    assert.deepEqual(e.extra, e.code === 'FAULT' ? ['error'] : e.code === 'RATE_LIMIT' ? ['retryAfter'] : []);
  }
});

it('builds the envelope of each kind as the clients read it', () => {
  assert.deepEqual(errorBody(infraErrors.accessDenied()), { code: 'ACCESS_DENIED', message: 'Access Denied' });
  assert.deepEqual(errorBody(infraErrors.invalidParameter({ name: 'ttl', problem: 'must be from 60 to 604800' })), {
    code: 'FAULT', message: 'Invalid parameter ttl: must be from 60 to 604800', error: { ttl: 'must be from 60 to 604800' },
  });
  // Several problems: the message names the first, `error` holds them all.
  const many = { 'data.0.type': 'is required: one of A', 'data.1.ttl': 'must be from 60 to 604800' };
  assert.deepEqual(errorBody(infraErrors.missingParameterDetail({ name: 'data.0.type', detail: 'one of A' }, many)), {
    code: 'FAULT', message: 'Missing parameter data.0.type: one of A', error: many,
  });
  assert.deepEqual(errorBody(infraErrors.missingParameter({ name: 'cmd' })), { code: 'FAULT', message: 'Missing parameter cmd', error: { cmd: 'is required' } });
  assert.deepEqual(errorBody(infraErrors.missingDomain({ name: 'domainId' })), {
    code: 'FAULT', message: 'Missing parameter domainId: the domain id (or name)', error: { domainId: 'is required (or name)' },
  });
  assert.deepEqual(errorBody(infraErrors.recordNotInDomain({ id: 7, domainId: 2 })), { code: 'ERROR', message: 'Could not find record 7 in domain 2' });
  const limited = rateLimited(0.2);
  assert.ok(limited instanceof RateLimited);
  assert.deepEqual(errorBody(limited), { code: 'RATE_LIMIT', message: 'Rate limit exceeded: try again in 1 second', retryAfter: 1 });
  assert.equal(rateLimited(4.1).message, 'Rate limit exceeded: try again in 5 seconds');
});

const SRC = path.resolve(import.meta.dirname, '../../src');
const CATALOG = path.join(SRC, 'infra', 'errors.ts');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Where, outside the catalog, an Infra error is made from something other than a catalog entry. */
function literalErrors(files: { file: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { file, text } of files) {
    if (file === CATALOG) continue;
    text.split('\n').forEach((line, i) => {
      const where = `${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`;
      // Only the catalog constructs them: a message never reaches InfraError from a handler.
      if (/\bnew\s+(InfraError|RateLimited)\s*\(/.test(line)) found.push(where);
    });
    // A subclass (the transport's BodyTooLarge) hands super() a catalog entry, never a message.
    if (/extends\s+(InfraError|RateLimited)\b/.test(text)) {
      for (const m of text.matchAll(/\bsuper\(\s*(['"`]|[A-Z_]+\s*,)/g)) {
        found.push(`${path.relative(SRC, file)}: super(${m[1]}...) with a literal`);
      }
    }
  }
  return found;
}

it('finds no Infra error made outside the catalog', () => {
  const files = sources(SRC).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  assert.ok(files.some((f) => f.file === CATALOG), 'the scan sees the catalog');
  assert.deepEqual(literalErrors(files), []);
  // The check itself catches the old forms.
  const fake = path.join(SRC, 'infra', 'commands', 'x.ts');
  assert.equal(literalErrors([{ file: fake, text: "throw new InfraError('ERROR', `Could not find ${what}`);" }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: "class A extends InfraError { constructor() { super('ERROR', 'too large'); } }" }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: 'throw new RateLimited(3);' }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: 'throw infraErrors.domainNotFound();' }]).length, 0);
});
