// A raw HTTP client for the Chat API that sends requests the way Zulip's Python client does:
// query parameters for GET, form-encoded bodies otherwise, non-string values JSON-encoded. Every
// 2xx answer is checked against Zulip's OpenAPI description (see zulip-openapi.ts).
import { checkChatResponse } from './zulip-openapi.js';

export interface ChatReply { status: number; body: Record<string, any>; headers: Headers }

export function encodeParams(params: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return form;
}

export class ChatClient {
  readonly base: string;
  readonly email: string;
  readonly apiKey: string;
  constructor(chatUrl: string, email: string, apiKey: string) {
    this.base = `${chatUrl}/api/v1`;
    this.email = email;
    this.apiKey = apiKey;
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
    const res = await fetch(url, { method, headers, body });
    const json = (await res.json()) as Record<string, any>;
    checkChatResponse(method, url, res.status, json);
    return { status: res.status, body: json, headers: res.headers };
  }

  get(path: string, params?: Record<string, unknown>) { return this.call('GET', path, params); }
  post(path: string, params?: Record<string, unknown>) { return this.call('POST', path, params); }
}
