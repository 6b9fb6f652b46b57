// HTTP requests from a chosen loopback address (127.0.0.0/8 is all this host's), so a black-box test
// can be several clients as the server sees them: per-address budgets, one address's lockout.
import http from 'node:http';

export interface AddressReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

let next = 2;
/** A loopback address no other request of this test process has used. */
export function freshAddress(): string {
  const n = next++;
  return `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`;
}

/** One request from `from`; a form body for Chat (Zulip clients send forms), a JSON one for Infra. */
export function requestFrom(from: string, url: string, init: { method?: string; headers?: Record<string, string>; form?: Record<string, string>; json?: unknown } = {}): Promise<AddressReply> {
  const body = init.form ? new URLSearchParams(init.form).toString() : init.json !== undefined ? JSON.stringify(init.json) : undefined;
  const headers: Record<string, string> = { ...init.headers };
  if (body !== undefined) {
    headers['content-type'] = init.form ? 'application/x-www-form-urlencoded' : 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) });
        } catch {
          reject(new Error(`not JSON (${res.statusCode}): ${text}`));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** HTTP Basic credentials as a header. */
export const basicAuth = (user: string, secret: string) => ({ authorization: 'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64') });
