// The Infra error catalog: every error the API can answer, declared once with its code, message
// template, HTTP status and extra envelope fields. Code raises an entry (`throw infraErrors.domainNotFound()`),
// never writes a message; the transport turns the InfraError into the envelope (transport/envelope.ts).
//
// Codes are RackCorp's (infra-clients.md 1.4): ACCESS_DENIED for credentials and permissions, FAULT for
// bad parameters (with `error`, one problem per parameter, as the provider's ticket pages show), ERROR
// for everything else, RATE_LIMIT over a budget. The status is 200 for every envelope the API answers:
// the Python client and LEGO read the envelope only from a 200.

export type ErrorCode = 'ERROR' | 'FAULT' | 'ACCESS_DENIED' | 'RATE_LIMIT';

/** The names between braces in a template: 'Could not find {what}' has 'what'. */
type Placeholders<T extends string> = T extends `${string}{${infer N}}${infer R}` ? N | Placeholders<R> : never;
export type TemplateValues<T extends string> = Record<Placeholders<T>, string | number>;

/** An entry's arguments: its placeholder values (none for a fixed text), then, for FAULTs, the per-parameter problems. */
type EntryArgs<T extends string> = [Placeholders<T>] extends [never] ? [values?: Record<string, never>, fields?: Record<string, string>] : [values: TemplateValues<T>, fields?: Record<string, string>];

export interface ErrorEntry<T extends string = string> {
  (...args: EntryArgs<T>): InfraError;
  /** The catalog's name for it. */
  readonly key: string;
  readonly code: ErrorCode;
  readonly template: T;
  readonly status: number;
  /** Envelope keys it adds to code and message: `error` (per-parameter problems), `retryAfter`. */
  readonly extra: readonly string[];
  /** The message for these values. */
  render(values: Record<string, string | number>): string;
}

export class InfraError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** The catalog entry it was raised from. */
  readonly entry: ErrorEntry;
  /** Per-parameter messages, sent as `error` (the provider's validation dialect). */
  readonly fields?: Record<string, string>;
  /** Only the catalog makes these (see `entry` below): a message is never written where it is raised. */
  constructor(entry: ErrorEntry, values: Record<string, string | number>, fields?: Record<string, string>) {
    super(entry.render(values));
    this.entry = entry;
    this.code = entry.code;
    this.status = entry.status;
    this.fields = fields;
  }
}

/** Over a rate limit (infra/rate-limit.ts): the envelope also carries `retryAfter`, in seconds as the Retry-After header. */
export class RateLimited extends InfraError {
  readonly retryAfter: number;
  constructor(entry: ErrorEntry, seconds: number) {
    super(entry, { seconds, unit: seconds === 1 ? 'second' : 'seconds' });
    this.retryAfter = seconds;
  }
}

const PLACEHOLDER = /\{(\w+)\}/g;

interface EntryOptions<T extends string> {
  status?: number;
  /** The `error` object when the caller gives none: per-parameter problems from the values. */
  fields?: (values: TemplateValues<T>) => Record<string, string>;
}

function entry<const T extends string>(key: string, code: ErrorCode, template: T, options: EntryOptions<T> = {}): ErrorEntry<T> {
  const names = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]);
  const render = (values: Record<string, string | number>): string => {
    if (names.length === 0) return template;
    return template.replace(PLACEHOLDER, (whole, name: string) => (values[name] === undefined ? whole : String(values[name])));
  };
  const raise = (values: Record<string, string | number> = {}, fields?: Record<string, string>): InfraError => {
    const f = fields ?? options.fields?.(values as TemplateValues<T>);
    return new InfraError(self, values, f);
  };
  const self = Object.assign(raise, {
    key,
    code,
    template,
    status: options.status ?? 200,
    extra: code === 'FAULT' ? ['error'] : code === 'RATE_LIMIT' ? ['retryAfter'] : [],
    render,
  }) as unknown as ErrorEntry<T>;
  return self;
}

/** The one parameter a FAULT names, with its problem: `error` is `{name: problem}`. */
const oneField = (v: { name: string | number; problem: string | number }) => ({ [v.name]: String(v.problem) });

const E = {
  // ---- credentials and permissions ------------------------------------------------------------
  /** Bad, missing or disabled credentials, or a wrong password (LEGO-L's fixture: exactly this text). */
  accessDenied: entry('accessDenied', 'ACCESS_DENIED', 'Access Denied'),
  permissionMissing: entry('permissionMissing', 'ACCESS_DENIED', 'Access Denied: this API user lacks the permission {cmd}'),
  /** credential-rules.ts: which permissions is not said (a weaker key need not learn a stronger one's). */
  mayNotManage: entry('mayNotManage', 'ACCESS_DENIED', 'Access Denied: {what} holds permissions this caller does not, so this caller may not change it'),
  mayNotGrant: entry('mayNotGrant', 'ACCESS_DENIED', 'Access Denied: cannot grant "{permission}", which this caller does not hold'),

  // ---- customers (issue 15): who may make sub-customers -----------------------------------------
  notReseller: entry('notReseller', 'ACCESS_DENIED', 'Access Denied: customer {id} is not a reseller or partner, so it cannot have sub-customers'),

  // ---- over a budget --------------------------------------------------------------------------
  rateLimited: entry('rateLimited', 'RATE_LIMIT', 'Rate limit exceeded: try again in {seconds} {unit}'),

  // ---- over a bound on what a customer holds -------------------------------------------------------
  limitReached: entry('limitReached', 'ERROR', 'Limit reached: a customer has at most {limit} {things}; delete one first'),

  // ---- parameters (FAULT, with `error`) ---------------------------------------------------------
  invalidParameter: entry('invalidParameter', 'FAULT', 'Invalid parameter {name}: {problem}', { fields: oneField }),
  missingParameter: entry('missingParameter', 'FAULT', 'Missing parameter {name}', { fields: (v) => ({ [v.name]: P.required() }) }),
  /** A required parameter with what it must hold (the DNS rules say "is required: <detail>"). */
  missingParameterDetail: entry('missingParameterDetail', 'FAULT', 'Missing parameter {name}: {detail}', {
    fields: (v) => ({ [v.name]: `is required: ${v.detail}` }),
  }),
  /** A domain named neither by id nor by zone name. */
  missingDomain: entry('missingDomain', 'FAULT', 'Missing parameter {name}: the domain id (or name)', {
    fields: (v) => ({ [v.name]: 'is required (or name)' }),
  }),
  /** Problems found with no parameter to name (a schema refusing the whole object). */
  invalidParameters: entry('invalidParameters', 'FAULT', 'Invalid parameters'),

  // ---- not found (ERROR: Terraform compares "Could not find <thing>" exactly) -------------------
  customerNotFound: entry('customerNotFound', 'ERROR', 'Could not find customer'),
  apiUserNotFound: entry('apiUserNotFound', 'ERROR', 'Could not find API user'),
  domainNotFound: entry('domainNotFound', 'ERROR', 'Could not find domain'),
  /** A domain a record of a batch names, by id or zone name. */
  namedDomainNotFound: entry('namedDomainNotFound', 'ERROR', 'Could not find domain {domain}'),
  recordNotFound: entry('recordNotFound', 'ERROR', 'Could not find record'),
  recordIdNotFound: entry('recordIdNotFound', 'ERROR', 'Could not find record {id}'),
  recordNotInDomain: entry('recordNotInDomain', 'ERROR', 'Could not find record {id} in domain {domainId}'),
  // catalogue (commands/catalogue.ts)
  productNotFound: entry('productNotFound', 'ERROR', 'Could not find product'),
  productGroupNotFound: entry('productGroupNotFound', 'ERROR', 'Could not find product group'),
  dataCentreNotFound: entry('dataCentreNotFound', 'ERROR', 'Could not find data centre'),

  // ---- rctransaction.* (worker family) ----------------------------------------------------------
  /** Terraform removes a server from its state on exactly this text (infra-clients.md 1.4). */
  deviceNotFound: entry('deviceNotFound', 'ERROR', 'Could not find device'),
  transactionNotFound: entry('transactionNotFound', 'ERROR', 'Could not find transaction'),
  deviceQueueFull: entry('deviceQueueFull', 'ERROR', 'Limit reached: a device has at most {limit} transactions waiting; wait for them to complete'),
  customerQueueFull: entry('customerQueueFull', 'ERROR', 'Limit reached: a customer has at most {limit} transactions waiting; wait for them to complete'),

  // ---- orders, contracts and devices (order.*, device.*) ----------------------------------------
  /** Terraform removes a server from its state on exactly this text (and only without `debug`). */
  orderNotFound: entry('orderNotFound', 'ERROR', 'Could not find order'),
  contractNotFound: entry('contractNotFound', 'ERROR', 'Could not find contract'),
  firewallPolicyNotFound: entry('firewallPolicyNotFound', 'ERROR', 'Could not find firewall policy {id} on device {deviceId}'),
  orderNotPending: entry('orderNotPending', 'ERROR', 'Order {id} is {status}: only a PENDING order can be confirmed or cancelled'),

  // ---- conflicts --------------------------------------------------------------------------------
  apiUserChanged: entry('apiUserChanged', 'ERROR', 'API user {id} changed while this request ran; nothing was changed, try again'),

  // ---- network family: sshkey.*, network.*, loadbalancer.* (issue 15) ---------------------------
  sshKeyNotFound: entry('sshKeyNotFound', 'ERROR', 'Could not find SSH key'),
  vlanNotFound: entry('vlanNotFound', 'ERROR', 'Could not find VLAN'),
  ipNetworkNotFound: entry('ipNetworkNotFound', 'ERROR', 'Could not find network'),
  /** The device an address is allocated to (same text as device.get's: Terraform compares it). */
  allocationNotFound: entry('allocationNotFound', 'ERROR', 'Could not find address {address} in network {id}'),
  loadBalancerNotFound: entry('loadBalancerNotFound', 'ERROR', 'Could not find load balancer'),
  networkFull: entry('networkFull', 'ERROR', 'Network {network} has no free address left'),
  vlanInUse: entry('vlanInUse', 'ERROR', 'VLAN {id} still carries networks; delete them first'),
  networkInUse: entry('networkInUse', 'ERROR', 'Network {network} still has addresses allocated to devices; release them first'),
  networkScopesLoadBalancer: entry('networkScopesLoadBalancer', 'ERROR', 'Network {network} is the scope of load balancer {id}; change or delete that first'),
  loadBalancerChanged: entry('loadBalancerChanged', 'ERROR', 'Load balancer {id} changed while this request ran; nothing was changed, try again'),
  /** Addresses allocated from one network are bounded like everything a customer holds. */
  allocationLimit: entry('allocationLimit', 'ERROR', 'Limit reached: a network hands out at most {limit} addresses; release one first'),

  // ---- object storage: storage.s3.* (issue 17) ----------------------------------------------------
  s3BucketNotFound: entry('s3BucketNotFound', 'ERROR', 'Could not find bucket'),
  s3CredentialNotFound: entry('s3CredentialNotFound', 'ERROR', 'Could not find S3 credential'),
  s3BucketTaken: entry('s3BucketTaken', 'ERROR', 'Bucket name {name} is taken; bucket names are unique across the endpoint'),
  s3BucketNotEmpty: entry('s3BucketNotEmpty', 'ERROR', 'Bucket {name} still holds objects; delete them first'),

  // ---- the request itself (transport) --------------------------------------------------------------
  unknownPath: entry('unknownPath', 'ERROR', 'Unknown path {path}: the API lives under /api/rest/v2.10/'),
  unknownRestPath: entry('unknownRestPath', 'ERROR', 'Unknown REST path {method} {path}'),
  methodNotAllowed: entry('methodNotAllowed', 'ERROR', 'Method {method} is not allowed on {path}; use {allowed}'),
  unknownCommand: entry('unknownCommand', 'ERROR', 'Unknown command: {cmd}'),
  malformedTarget: entry('malformedTarget', 'ERROR', 'Malformed request target'),
  malformedPercent: entry('malformedPercent', 'ERROR', 'Malformed percent-encoding in the path segment {segment}'),
  malformedJson: entry('malformedJson', 'ERROR', 'Malformed JSON in the request body: {reason}'),
  bodyNotObject: entry('bodyNotObject', 'ERROR', 'Malformed request body: expected a JSON object'),
  bodyTooLarge: entry('bodyTooLarge', 'ERROR', 'Request body too large: the limit is {limit} bytes'),
  /** Before the headers showed valid credentials, the smaller limit applies. */
  bodyTooLargeOpen: entry(
    'bodyTooLargeOpen',
    'ERROR',
    'Request body too large: the limit is {limit} bytes without valid credentials in the headers (HTTP Basic, a Bearer JWT or the session cookie), {credentialedLimit} bytes with them',
  ),
  /**
   * Bytes node's HTTP parser refused: written by the HTTP core before any request exists, with its
   * status (400, or 408 for a request timeout, 431 for oversized headers) and the status text as reason.
   */
  malformedHttp: entry('malformedHttp', 'ERROR', 'Malformed HTTP request ({reason})', { status: 400 }),
  /** Anything not an InfraError: logged with its stack, answered without details. */
  internalError: entry('internalError', 'FAULT', 'Internal server error'),
};

// ---- per-parameter problems ---------------------------------------------------------------------
// What a FAULT says about one parameter: the values of its `error` object, and the end of its message
// ("Invalid parameter ttl: <problem>"). The rules that find a problem name it from here.

export interface ProblemText<T extends string = string> {
  (...args: [Placeholders<T>] extends [never] ? [] : [values: TemplateValues<T>]): string;
  readonly key: string;
  readonly template: T;
}

function problem<const T extends string>(key: string, template: T): ProblemText<T> {
  const text = (values: Record<string, string | number> = {}) => template.replace(PLACEHOLDER, (whole, name: string) => (values[name] === undefined ? whole : String(values[name])));
  return Object.assign(text, { key, template }) as unknown as ProblemText<T>;
}

const P = {
  // any parameter (params.ts)
  required: problem('required', 'is required'),
  nul: problem('nul', 'must not contain NUL characters'),
  loneSurrogate: problem('loneSurrogate', 'must be valid Unicode text (it holds a lone surrogate)'),
  tooDeep: problem('tooDeep', 'is nested more than {depth} levels deep'),
  mustBe: problem('mustBe', 'must be {what}'),
  atMost: problem('atMost', 'must be at most {limit}'),
  atLeast: problem('atLeast', 'must be at least {limit}'),
  longest: problem('longest', 'must be at most {limit} characters long'),
  shortest: problem('shortest', 'must be at least {limit} characters long'),
  empty: problem('empty', 'must not be empty'),
  // apiuser.*
  unknownPermission: problem('unknownPermission', 'unknown permission "{permission}" (see apiuser.permissions.system)'),
  contradictsStatus: problem('contradictsStatus', 'contradicts status {status}'),
  // customer.* (commands/customer.ts)
  ownAccount: problem('ownAccount', "cannot be changed on the caller's own customer, only on its sub-customers"),
  emailAddress: problem('emailAddress', 'must be an email address such as name@example.com'),
  currencyCode: problem('currencyCode', 'must be a currency code of three capital letters, such as AUD'),
  username: problem('username', 'must be 1 to 100 letters, digits and . _ @ + -'),
  usernameTaken: problem('usernameTaken', 'is taken'),
  loginNeedsBoth: problem('loginNeedsBoth', 'is required with {other}: a login has both'),
  // names (dns-rules.ts)
  zoneName: problem('zoneName', 'must be a domain name such as example.com'),
  nameTooLong: problem('nameTooLong', 'must be at most {max} characters'),
  twoLabels: problem('twoLabels', 'must have at least two labels, such as example.com'),
  emptyLabel: problem('emptyLabel', 'has an empty label'),
  labelTooLong: problem('labelTooLong', 'has a label longer than {max} characters'),
  badLabel: problem('badLabel', 'has an invalid label "{label}" (letters, digits and hyphens; no hyphen at either end)'),
  badOwnerLabel: problem('badOwnerLabel', 'has an invalid label "{label}" (letters, digits and hyphens, underscores; no hyphen at either end)'),
  lookupText: problem('lookupText', 'must be a string: the name relative to the zone, "" or "@" for the apex'),
  lookupRequired: problem('lookupRequired', 'is required: the name relative to the zone, "" or "@" for the apex'),
  outsideZone: problem('outsideZone', '"{name}" is not inside the zone {zone}'),
  wildcard: problem('wildcard', 'may use "*" only as the whole leftmost label'),
  ownerTooLong: problem('ownerTooLong', 'makes a name longer than {max} characters'),
  hostOrRoot: problem('hostOrRoot', 'must be a host name, or "." for none'),
  host: problem('host', 'must be a host name'),
  qualifiedHost: problem('qualifiedHost', 'must be a fully qualified host name such as host.example.com, got "{value}"'),
  // record values (dns-rules.ts)
  integerRange: problem('integerRange', 'must be an integer from {min} to {max}'),
  range: problem('range', 'must be from {min} to {max}'),
  text: problem('text', 'must be a string'),
  typeRequired: problem('typeRequired', 'is required: one of {types}'),
  ahashed: problem('ahashed', 'AHASHED is not supported by this server; use A records'),
  typeUnknown: problem('typeUnknown', 'must be one of {types}'),
  caaTag: problem('caaTag', 'must be issue, issuewild, iodef or another tag of 1-15 letters and digits'),
  caaTagRequired: problem('caaTagRequired', 'is required for CAA records: issue, issuewild or iodef'),
  caaValueRequired: problem('caaValueRequired', 'is required: the CAA value'),
  valueRequired: problem('valueRequired', 'is required: the record value'),
  requiredFor: problem('requiredFor', 'is required for {type} records ({min} to {max})'),
  ipv4: problem('ipv4', 'must be an IPv4 address such as 192.0.2.1, got "{value}"'),
  ipv6: problem('ipv6', 'must be an IPv6 address such as 2001:db8::1, got "{value}"'),
  bytes: problem('bytes', 'must be at most {max} bytes'),
  // zones a customer may not host (dns-rules.ts unhostableZone)
  nameserverDomain: problem('nameserverDomain', "{name} is this server's nameserver domain {domain} (ns1..ns4.{domain}), which the server answers for itself"),
  insideNameserverDomain: problem('insideNameserverDomain', "{name} is inside this server's nameserver domain {domain} (ns1..ns4.{domain}), which the server answers for itself"),
  publicSuffix: problem('publicSuffix', '{name} is a public suffix (on the Public Suffix List): its names belong to many owners; host a domain registered under it instead'),
  wideReverse: problem('wideReverse', '{name} is a reverse zone wider than a {width}: host at most a {width}, with at least {labels} labels before {suffix}, such as {example}'),
  // records together (dns-rules.ts checkZoneRules)
  cnameAtApex: problem('cnameAtApex', 'a CNAME cannot be at the zone apex'),
  nsAtApex: problem('nsAtApex', 'NS records at the apex are made by the server; add NS only below the apex'),
  cnameNotAlone: problem('cnameNotAlone', 'a CNAME must be the only record at its name, and {where} already has {types}'),
  besideCname: problem('besideCname', '{where} has a CNAME record, which must be the only record at its name'),
  // dns.* requests (commands/dns.ts, dns-input.ts)
  domainId: problem('domainId', 'must be a domain id'),
  domainRequired: problem('domainRequired', 'is required: the domain id (domainid, domainId, domainID) or the zone name (name)'),
  notThatDomain: problem('notThatDomain', '{name} is not domain {id} ({zone})'),
  hostedHere: problem('hostedHere', '{name} is already hosted in this account (domain {id})'),
  hosted: problem('hosted', '{name} is already hosted'),
  zoneClash: problem('zoneClash', '{name} is inside or above a zone hosted by another customer'),
  tooManyZones: problem('tooManyZones', 'would make more than {max} zones in this account; delete a zone first'),
  tooManyRecords: problem('tooManyRecords', 'would make more than {max} records in the zone {zone}; delete records first'),
  recordId: problem('recordId', 'must be a record id'),
  recordIdRequired: problem('recordIdRequired', 'is required: the record id'),
  recordTwice: problem('recordTwice', 'names a record more than once'),
  recordMoves: problem('recordMoves', 'a record cannot move to another domain'),
  matchTypeRequired: problem('matchTypeRequired', 'is required to delete by match (or give the record id)'),
  noRecords: problem('noRecords', 'must hold at least one record'),
  noRecordIds: problem('noRecordIds', 'must hold at least one record id'),
  recordObject: problem('recordObject', 'must be a record object'),
  recordList: problem('recordList', 'must be a list or a map of records'),
  // catalogue (commands/catalogue.ts)
  periodUnknown: problem('periodUnknown', 'must be one of {periods}'),
  // object storage (issue 17)
  s3BucketName: problem('s3BucketName', '{problem}'),
  // network family: sshkey.*, network.*, loadbalancer.* (issue 15)
  sshKeyShape: problem('sshKeyShape', 'must be an OpenSSH public key: "<type> <base64> [comment]"'),
  sshKeyType: problem('sshKeyType', 'has the key type "{type}"; accepted: {types}'),
  sshKeyBase64: problem('sshKeyBase64', 'holds a key that is not valid base64'),
  sshKeyMismatch: problem('sshKeyMismatch', 'says {written} but its key data holds a {embedded} key'),
  sshKeyBlob: problem('sshKeyBlob', 'is not a well-formed {type} key'),
  sshKeyRsaBits: problem('sshKeyRsaBits', 'is an RSA key of {bits} bits; {min} to {max} bits are accepted'),
  cidr: problem('cidr', 'must be a network in CIDR form such as 192.0.2.0/24 or 2001:db8::/48'),
  cidrHostBits: problem('cidrHostBits', 'has host bits set: the network is {network}'),
  prefixRange: problem('prefixRange', 'must have a prefix length from /{min} to /{max} for IPv{family}'),
  networkOverlap: problem('networkOverlap', 'overlaps network {id} ({network}) of this customer'),
  ipAddress: problem('ipAddress', 'must be an IPv4 or IPv6 address'),
  outsideNetwork: problem('outsideNetwork', '{address} is not a host address of {network}'),
  addressTaken: problem('addressTaken', '{address} is already in use'),
  dataCentre: problem('dataCentre', 'must be a data centre id or name (see dc.getall)'),
  vlanTaken: problem('vlanTaken', 'VLAN {tag} already exists in data centre {dc}'),
  vlanElsewhere: problem('vlanElsewhere', 'VLAN {id} is in data centre {dc}, not {wanted}'),
  hostOrAddress: problem('hostOrAddress', 'must be a host name or an IP address'),
  // rctransaction.* (worker family)
  deviceId: problem('deviceId', 'must be a device id'),
  startupJson: problem('startupJson', 'must be a JSON object written as a string, whose cloudInit holds userData, metaData or networkConfig strings'),
  startupField: problem('startupField', 'field {field} must be a string'),
  confirmTransaction: problem('confirmTransaction', '{type} on device {id} takes the server down or destroys it: send it again with confirmation true'),
  startupCloudInit: problem('startupCloudInit', 'field cloudInit must be an object of userData, metaData and networkConfig strings'),
  // order.*, device.* (orders-details.ts, commands/order.ts, commands/device.ts)
  unknownProduct: problem('unknownProduct', 'unknown product code "{code}" (see product.getall)'),
  unknownCustomer: problem('unknownCustomer', "must be the id of the caller's customer or of one of its sub-customers"),
  unknownDc: problem('unknownDc', 'unknown data centre "{dc}" (see dc.getall)'),
  notThatDc: problem('notThatDc', '{location} is not the data centre given as dcId ({dc})'),
  dcRequired: problem('dcRequired', 'is required: the data centre (dcId or location)'),
  notSoldIn: problem('notSoldIn', 'the product {product} is not sold in {dc}'),
  machineUsername: problem('machineUsername', 'must be a user name: a lower-case letter or "_", then up to 31 letters, digits, "_" or "-"'),
  hostname: problem('hostname', 'must be a host name (letters, digits and hyphens in dot-separated labels)'),
  atMostItems: problem('atMostItems', 'must hold at most {limit} items'),
  ipv4Count: problem('ipv4Count', 'asks for more than {max} IPv4 addresses in all'),
  unknownOs: problem('unknownOs', 'unknown operating system "{os}" (see operatingsystem.getall)'),
  unknownTemplate: problem('unknownTemplate', 'unknown template "{template}" (see template.getall)'),
  deletedInOrder: problem('deletedInOrder', 'DELETED removes a policy of an existing device; an order can only add policies'),
  timezone: problem('timezone', 'must be a time zone name such as Australia/Sydney or UTC'),
  portNumber: problem('portNumber', 'must be a port from 1 to 65535, or null for any'),
  addressOrNetwork: problem('addressOrNetwork', 'must be an IP address or a network such as 192.0.2.0/24'),
  tooManyPolicies: problem('tooManyPolicies', 'would leave more than {max} firewall policies on the device; delete some first'),
  policyIdRequired: problem('policyIdRequired', 'DELETED needs the id of the policy to remove'),
  nothingToChange: problem('nothingToChange', 'nothing to change: give the new name'),
};

/** What a FAULT says about one parameter (see above). */
export const infraProblems: typeof P = P;

/** Every problem text, for the test that pins them. */
export function problemEntries(): ProblemText[] {
  return Object.values(P) as ProblemText[];
}

/** The catalog. */
export const infraErrors: typeof E = E;

/** Every entry, for the test that pins the catalog and for documentation. */
export function catalogEntries(): ErrorEntry[] {
  return Object.values(E) as ErrorEntry[];
}

/**
 * The FAULT for problems of one or more parameters: the message names the first ("Missing parameter
 * <name>: <what>" when it is missing, else "Invalid parameter <name>: <problem>"); `error` holds them all.
 */
export function problemsFault(fields: Record<string, string>): InfraError {
  const [first] = Object.keys(fields);
  const problem = fields[first];
  return problem.startsWith('is required')
    ? E.missingParameterDetail({ name: first, detail: problem.slice('is required'.length).replace(/^: /, '') || 'required' }, fields)
    : E.invalidParameter({ name: first, problem }, fields);
}

/** The RATE_LIMIT error for a wait, in whole seconds (at least one), as the envelope's retryAfter. */
export function rateLimited(waitSeconds: number): RateLimited {
  return new RateLimited(E.rateLimited as ErrorEntry, Math.max(1, Math.ceil(waitSeconds)));
}

/** The error's envelope text for the places that write JSON without an InfraError's path (the HTTP core's refusals). */
export function envelopeText(error: InfraError): string {
  return JSON.stringify({ code: error.code, message: error.message });
}
