// zulip-js, unmodified, with every 2xx answer it receives checked against Zulip's OpenAPI
// description: zulip-js looks its fetch up on its helper module at each call, so replacing that
// one property sees every request the library makes without changing how it makes them.
import { createRequire } from 'node:module';
import zulip from 'zulip-js';
import { checkChatResponse } from './zulip-openapi.js';

interface FetchResponse {
  status: number;
  clone(): { json(): Promise<unknown> };
}
type Fetch = (url: string, options?: { method?: string }) => Promise<FetchResponse>;

const helper = createRequire(import.meta.url)('zulip-js/lib/helper.js') as { fetch: Fetch; validated?: true };
if (!helper.validated) {
  const original = helper.fetch;
  helper.fetch = async (url, options) => {
    const res = await original(url, options);
    if (res.status >= 200 && res.status < 300) {
      // A failure here rejects the zulip-js call, so the test that made it fails with the reason.
      checkChatResponse(options?.method ?? 'GET', url, res.status, await res.clone().json());
    }
    return res;
  };
  helper.validated = true;
}

export default zulip;
