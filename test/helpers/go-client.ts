// The RackCorp Go client's HTTP layer (rackcorp-api-go client.go), as it goes on the wire: command
// calls POST {base}/rest/{version}/json.php, REST calls {METHOD} {base}/{version}/{suffix}, both with
// a JSON body (REST reads send `{}`, GET included), Basic credentials, Accept and User-Agent; the
// HTTP status is not looked at, only the decoded body. The Terraform provider drives this client
// (v1.0.0 speaks v2.8, v1.1.0 v2.9). node:http rather than fetch, which cannot send a GET body.
import http from 'node:http';

export interface GoReply {
  status: number;
  text: string;
  body: Record<string, any>;
}

export class GoClient {
  private readonly base: string;
  private readonly version: string;
  private readonly authorization: string;

  /** base: the server's address followed by /api, as the client's baseUrl (https://api.rackcorp.net/api). */
  constructor(infraUrl: string, uuid: string, secret: string, version: 'v2.8' | 'v2.9' = 'v2.9') {
    this.base = `${infraUrl}/api`;
    this.version = version;
    this.authorization = 'Basic ' + Buffer.from(`${uuid}:${secret}`).toString('base64');
  }

  /** httpLegacyJson: a command. */
  legacy(cmd: string, params: Record<string, unknown> = {}): Promise<GoReply> {
    return this.send('POST', `${this.base}/rest/${this.version}/json.php`, { cmd, ...params });
  }

  /** httpRestJson: a REST call; reads carry the client's emptyRequest{} as their body. */
  rest(method: 'GET' | 'POST' | 'PUT' | 'DELETE', suffix: string, body: unknown = {}): Promise<GoReply> {
    return this.send(method, `${this.base}/${this.version}/${suffix}`, body);
  }

  private send(method: string, url: string, body: unknown): Promise<GoReply> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        url,
        {
          method,
          headers: {
            'content-type': 'application/json',
            'content-length': payload.length,
            accept: 'application/json',
            'user-agent': 'rackcorpapi/1.0 golang/go1.22.5',
            authorization: this.authorization,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: Record<string, any>;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = { unparsable: text };
            }
            resolve({ status: res.statusCode ?? 0, text, body: parsed });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
}
