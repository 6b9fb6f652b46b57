// What an Infra command is: one definition serves json.php, its REST path, the permission list,
// parameter checking and the OpenAPI document.
import type { Static, TObject } from 'typebox';
import type { Database } from '../platform/db/database.js';
import type { JwtSigner } from '../platform/auth/jwt.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/log.js';
import type { InfraTables } from './tables.js';
import type { ZoneWriter } from './dns-batches.js';
import type { InfraLimits } from './rate-limit.js';
import type { CatalogueIndex } from './catalogue.js';
import type { DeviceViews } from './devices/view-cache.js';
import type { SecretSeal } from './s3/buckets.js';
import type { FileStore } from '../platform/files/file-store.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Who is calling: an API key (uuid + secret, or a JWT issued for it) or a customer's login. */
export interface Principal {
  kind: 'apiuser' | 'login';
  id: number;
  customerId: number;
  permissions: string[];
  /**
   * An API user's: a tag of its current secret (accounts.ts secretTag). The JWTs issued for it carry
   * the tag, so a new secret ends every session opened with the old one.
   */
  secretTag?: string;
}

/** What every handler can reach. */
export interface InfraServices {
  db: Database<InfraTables>;
  jwt: JwtSigner;
  clock: Clock;
  log: Logger;
  /** Writes zone changes in batches and keeps the catalog the DNS server answers from current after each commit. */
  zoneWriter: ZoneWriter;
  /** ns1..ns4 live under this domain (config --nameserver-domain): no customer may host it. */
  nameserverDomain: string;
  /** API budgets per key and per address, and session.login's password budgets (rate-limit.ts). */
  limits: InfraLimits;
  /** What can be ordered, where and at what price (catalogue.ts): the default or the operator's file. */
  catalogue: CatalogueIndex;
  /** device.get's answers per device, kept while nothing they are made from is written (devices/view-cache.ts). */
  deviceViews: DeviceViews;
  /** Seals S3 credentials' secrets (storage.s3.credential.create; the S3 endpoint unseals them to check SigV4). */
  s3Seal: SecretSeal;
  /** Where S3 objects and parts live (`<data dir>/s3`). */
  s3Files: FileStore;
}

export interface Call {
  services: InfraServices;
  /** Absent only for commands whose access is 'public'. */
  principal?: Principal;
  style: 'cmd' | 'rest';
  /** The client's address (the TCP peer). */
  ip: string;
  /** Lets session commands set the JWTSESSIONID cookie. */
  setCookie(name: string, value: string, maxAgeSeconds: number): void;
}

export interface Result {
  message: string;
  /** The REST payload; command style carries it as `data` too. */
  data?: unknown;
  /** Total count of a list, whatever the window (top-level `matches` in both styles). */
  matches?: number;
  /** Command-style top-level keys (the provider's legacy names: `apiusers`, `customer`, `token` ...). */
  top?: Record<string, unknown>;
}

/**
 * A command's dialect step: RackCorp's clients send some parameters in several shapes (DNS records as a
 * list, a map or flat fields). `run` rewrites the request's parameters, in place, into the one shape
 * the command's `params` describes; the check then validates that shape, and handlers read only it.
 */
export interface Normaliser {
  /** What a client may send, every accepted form (the OpenAPI document shows this, not `params`). */
  input: TObject;
  /**
   * Rewrites `params` into the canonical shape. Returns how the request names a place of that shape
   * (['records', '2', 'ttl'] -> 'data.2.ttl'), so problems found there name what the client sent.
   */
  run(params: Record<string, unknown>): ((path: string[]) => string | undefined) | undefined;
}

/**
 * access: 'public' needs no credentials; 'authenticated' needs valid ones; 'permission' (the default)
 * also needs the command in the caller's permissions.
 */
export interface Command<S extends TObject = TObject> {
  cmd: string;
  summary: string;
  rest: { method: HttpMethod; path: string };
  /** The parameters as the handler gets them: checked and converted by params.ts. */
  params: S;
  /** Set when clients send parameters in more than one shape: run before the check (params.ts). */
  normalise?: Normaliser;
  access?: 'public' | 'authenticated' | 'permission';
  handler(call: Call, params: Static<S>): Promise<Result>;
}

/** Keeps the parameter type of each definition while the registry holds them as one list. */
export function defineCommand<S extends TObject>(c: Command<S>): Command {
  return c as unknown as Command;
}

export function requirePrincipal(call: Call): Principal {
  if (!call.principal) throw new Error(`command reached without a principal`);
  return call.principal;
}
