// How much of Zulip 10.2's API Keel serves: every operation of the reference description must be
// one of Keel's endpoint definitions, or be listed below with the reason it is not (yet). A listed
// operation that Keel now serves fails too, so the list only shrinks as the work lands.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { allEndpoints } from '../../src/chat/endpoints/index.js';
import { referenceMissing, ZULIP_OPENAPI_PATH } from '../helpers/zulip-openapi.js';

/** Paths of the description that document a protocol, not an operation a server answers. */
const DOCUMENTATION_ONLY: Record<string, string> = {
  'POST /real-time': "documents the event system's long-polling, which /register and /events serve",
  'POST /rest-error-handling': 'documents the error format every endpoint uses',
  'POST /zulip-outgoing-webhook': "documents what Zulip sends to an outgoing webhook bot's server, not an operation of Zulip's",
};

/** Operations Keel does not serve yet, with the reason (none: all 118 are served since issue 16). */
const NOT_YET: Record<string, string> = {};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const key = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`;

const why = referenceMissing();
describe("coverage of Zulip 10.2's operations", { skip: why }, () => {
  it('serves every operation of the description, but those listed with a reason', () => {
    const doc = parse(readFileSync(ZULIP_OPENAPI_PATH, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
    const served = new Set(allEndpoints().map((e) => key(e.method, e.path)));
    const listed = new Set(Object.keys({ ...DOCUMENTATION_ONLY, ...NOT_YET }).map((k) => key(...(k.split(' ') as [string, string]))));
    const operations: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) if (item[m]) operations.push(`${m.toUpperCase()} ${path}`);
    }
    const missing = operations.filter((op) => !served.has(key(...(op.split(' ') as [string, string]))) && !listed.has(key(...(op.split(' ') as [string, string]))));
    assert.deepEqual(missing, [], 'operations neither served nor listed with a reason');
    const stale = Object.keys(NOT_YET).filter((op) => served.has(key(...(op.split(' ') as [string, string]))));
    assert.deepEqual(stale, [], 'listed as not served, but served: remove them from NOT_YET');
    const real = operations.length - Object.keys(DOCUMENTATION_ONLY).length;
    console.log(`# Zulip 10.2 operations served: ${real - Object.keys(NOT_YET).length} of ${real}`);
  });
});
