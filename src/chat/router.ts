// Chat's routes on the shared router (platform/http/router.ts): the endpoint definitions under
// /api/v1, matched as written, an `_id` parameter being digits, a broken %-escape a 400.
import type { Endpoint } from './endpoint.js';
import { malformedPathEscape } from './errors.js';
import { Router } from '../platform/http/router.js';

/** What a client is told of a path with a broken %-escape (`%zz`, a lone `%`, `%FF` that is not UTF-8). */
export const BAD_PATH_ESCAPE = malformedPathEscape.template;

const DIGITS = /^[0-9]+$/;

export class ChatRouter extends Router<Endpoint> {
  constructor(endpoints: Endpoint[]) {
    super(
      endpoints.map((e) => ({ method: e.method, path: e.path, value: e })),
      {
        // As in Zulip's URL patterns, an id segment is digits: /users/{user_id} and /users/{email}
        // share a shape and the segment decides.
        paramPattern: (name) => (name.endsWith('_id') ? DIGITS : undefined),
        badEscape: () => malformedPathEscape(),
      },
    );
  }
}
