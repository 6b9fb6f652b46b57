// A raw HTTP client for the Infra API, sending requests the way the real clients do.
export interface Reply {
  status: number;
  text: string;
  body: Record<string, any>;
  headers: Headers;
}

export type Auth = { basic: [string, string] } | { bearer: string } | { cookie: string } | { body: [string, string] } | null | undefined;

export async function send(url: string, init: { method?: string; body?: unknown; auth?: Auth; contentType?: string; rawBody?: string }): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: Record<string, unknown> | undefined = init.body as Record<string, unknown> | undefined;
  const auth = init.auth;
  if (auth && 'basic' in auth) headers.authorization = 'Basic ' + Buffer.from(auth.basic.join(':')).toString('base64');
  if (auth && 'bearer' in auth) headers.authorization = `Bearer ${auth.bearer}`;
  if (auth && 'cookie' in auth) headers.cookie = `JWTSESSIONID=${auth.cookie}`;
  if (auth && 'body' in auth) body = { ...body, APIUUID: auth.body[0], APISECRET: auth.body[1] };
  const text = init.rawBody ?? (body !== undefined ? JSON.stringify(body) : undefined);
  if (text !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  const res = await fetch(url, { method: init.method ?? (text !== undefined ? 'POST' : 'GET'), headers, body: text });
  const raw = await res.text();
  let parsed: Record<string, any>;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = { unparsable: raw };
  }
  return { status: res.status, text: raw, body: parsed, headers: res.headers };
}

export class InfraClient {
  readonly base: string;
  auth: Auth;
  constructor(infraUrl: string, auth?: Auth, base = '/api/rest/v2.10') {
    this.base = infraUrl + base;
    this.auth = auth;
  }
  cmd(cmd: string, params: Record<string, unknown> = {}, auth: Auth = this.auth): Promise<Reply> {
    return send(`${this.base}/json.php`, { body: { cmd, ...params }, auth });
  }
  rest(method: string, path: string, body?: unknown, auth: Auth = this.auth): Promise<Reply> {
    return send(this.base + path, { method, body, auth });
  }
}
