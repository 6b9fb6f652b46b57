// A raw HTTP client for the Chat API that sends requests the way Zulip's Python client does:
// query parameters for GET, form-encoded bodies otherwise, non-string values JSON-encoded. Every
// 2xx answer is checked against Zulip's OpenAPI description (see zulip-openapi.ts).
import { request } from 'node:http';
import { checkChatResponse } from './zulip-openapi.js';

export interface ChatReply {
  status: number;
  body: Record<string, any>;
  headers: Headers;
}

export function encodeParams(params: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return form;
}

/** A request with a Host header of our choosing (fetch cannot set Host): how a realm is addressed by subdomain. */
function requestWithHost(url: string, method: string, headers: Record<string, string>, body: string | undefined, host: string): Promise<{ status: number; text: string; headers: Headers }> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time: no kept-alive socket the server may have closed meanwhile.
    const req = request(url, { method, headers: { ...headers, host }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out.set(k, v);
        resolve({ status: res.statusCode!, text, headers: out });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export class ChatClient {
  readonly base: string;
  readonly email: string;
  readonly apiKey: string;
  /** The Host header to send (a realm's subdomain); absent: the address of chatUrl (the first realm). */
  readonly host?: string;
  constructor(chatUrl: string, email: string, apiKey: string, host?: string) {
    this.base = `${chatUrl}/api/v1`;
    this.email = email;
    this.apiKey = apiKey;
    this.host = host;
  }

  async call(method: string, path: string, params: Record<string, unknown> = {}, auth: [string, string] | null = [this.email, this.apiKey]): Promise<ChatReply> {
    const form = encodeParams(params);
    const headers: Record<string, string> = { 'user-agent': 'ZulipPython/0.9.0 (keel-tests)' };
    if (auth) headers.authorization = 'Basic ' + Buffer.from(auth.join(':')).toString('base64');
    let url = this.base + path;
    let body: string | undefined;
    if (method === 'GET') {
      if ([...form].length) url += `?${form}`;
    } else {
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    if (this.host !== undefined) {
      const res = await requestWithHost(url, method, headers, body, this.host);
      const json = JSON.parse(res.text) as Record<string, any>;
      checkChatResponse(method, url, res.status, json);
      return { status: res.status, body: json, headers: res.headers };
    }
    const res = await fetch(url, { method, headers, body });
    const json = (await res.json()) as Record<string, any>;
    checkChatResponse(method, url, res.status, json);
    return { status: res.status, body: json, headers: res.headers };
  }

  get(path: string, params?: Record<string, unknown>) {
    return this.call('GET', path, params);
  }
  post(path: string, params?: Record<string, unknown>) {
    return this.call('POST', path, params);
  }
}
