// The Infra error catalog (src/infra/errors.ts): every entry pinned (a changed code, text or status is
// a wire change and must show here), and no message written anywhere else.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { catalogEntries, infraErrors, infraProblems, problemEntries, rateLimited, RateLimited } from '../../src/infra/errors.js';
import { errorBody } from '../../src/infra/transport/envelope.js';

const PINNED: Record<string, [code: string, status: number, template: string]> = {
  accessDenied: ['ACCESS_DENIED', 200, 'Access Denied'],
  permissionMissing: ['ACCESS_DENIED', 200, 'Access Denied: this API user lacks the permission {cmd}'],
  mayNotManage: ['ACCESS_DENIED', 200, 'Access Denied: {what} holds permissions this caller does not, so this caller may not change it'],
  mayNotGrant: ['ACCESS_DENIED', 200, 'Access Denied: cannot grant "{permission}", which this caller does not hold'],
  rateLimited: ['RATE_LIMIT', 200, 'Rate limit exceeded: try again in {seconds} {unit}'],
  limitReached: ['ERROR', 200, 'Limit reached: a customer has at most {limit} {things}; delete one first'],
  invalidParameter: ['FAULT', 200, 'Invalid parameter {name}: {problem}'],
  missingParameter: ['FAULT', 200, 'Missing parameter {name}'],
  missingParameterDetail: ['FAULT', 200, 'Missing parameter {name}: {detail}'],
  missingDomain: ['FAULT', 200, 'Missing parameter {name}: the domain id (or name)'],
  invalidParameters: ['FAULT', 200, 'Invalid parameters'],
  customerNotFound: ['ERROR', 200, 'Could not find customer'],
  apiUserNotFound: ['ERROR', 200, 'Could not find API user'],
  domainNotFound: ['ERROR', 200, 'Could not find domain'],
  namedDomainNotFound: ['ERROR', 200, 'Could not find domain {domain}'],
  recordNotFound: ['ERROR', 200, 'Could not find record'],
  recordIdNotFound: ['ERROR', 200, 'Could not find record {id}'],
  recordNotInDomain: ['ERROR', 200, 'Could not find record {id} in domain {domainId}'],
  // catalogue
  productNotFound: ['ERROR', 200, 'Could not find product'],
  productGroupNotFound: ['ERROR', 200, 'Could not find product group'],
  dataCentreNotFound: ['ERROR', 200, 'Could not find data centre'],
  // rctransaction.* (worker family)
  deviceNotFound: ['ERROR', 200, 'Could not find device'],
  transactionNotFound: ['ERROR', 200, 'Could not find transaction'],
  deviceQueueFull: ['ERROR', 200, 'Limit reached: a device has at most {limit} transactions waiting; wait for them to complete'],
  customerQueueFull: ['ERROR', 200, 'Limit reached: a customer has at most {limit} transactions waiting; wait for them to complete'],
  // order.*, device.* (issue 15, orders helper)
  orderNotFound: ['ERROR', 200, 'Could not find order'],
  contractNotFound: ['ERROR', 200, 'Could not find contract'],
  firewallPolicyNotFound: ['ERROR', 200, 'Could not find firewall policy {id} on device {deviceId}'],
  orderNotPending: ['ERROR', 200, 'Order {id} is {status}: only a PENDING order can be confirmed or cancelled'],
  apiUserChanged: ['ERROR', 200, 'API user {id} changed while this request ran; nothing was changed, try again'],
  // network family: sshkey.*, network.*, loadbalancer.* (issue 15)
  sshKeyNotFound: ['ERROR', 200, 'Could not find SSH key'],
  vlanNotFound: ['ERROR', 200, 'Could not find VLAN'],
  ipNetworkNotFound: ['ERROR', 200, 'Could not find network'],
  allocationNotFound: ['ERROR', 200, 'Could not find address {address} in network {id}'],
  loadBalancerNotFound: ['ERROR', 200, 'Could not find load balancer'],
  networkFull: ['ERROR', 200, 'Network {network} has no free address left'],
  vlanInUse: ['ERROR', 200, 'VLAN {id} still carries networks; delete them first'],
  networkInUse: ['ERROR', 200, 'Network {network} still has addresses allocated to devices; release them first'],
  networkScopesLoadBalancer: ['ERROR', 200, 'Network {network} is the scope of load balancer {id}; change or delete that first'],
  loadBalancerChanged: ['ERROR', 200, 'Load balancer {id} changed while this request ran; nothing was changed, try again'],
  allocationLimit: ['ERROR', 200, 'Limit reached: a network hands out at most {limit} addresses; release one first'],
  unknownPath: ['ERROR', 200, 'Unknown path {path}: the API lives under /api/rest/v2.10/'],
  unknownRestPath: ['ERROR', 200, 'Unknown REST path {method} {path}'],
  methodNotAllowed: ['ERROR', 200, 'Method {method} is not allowed on {path}; use {allowed}'],
  unknownCommand: ['ERROR', 200, 'Unknown command: {cmd}'],
  malformedTarget: ['ERROR', 200, 'Malformed request target'],
  malformedPercent: ['ERROR', 200, 'Malformed percent-encoding in the path segment {segment}'],
  malformedJson: ['ERROR', 200, 'Malformed JSON in the request body: {reason}'],
  bodyNotObject: ['ERROR', 200, 'Malformed request body: expected a JSON object'],
  bodyTooLarge: ['ERROR', 200, 'Request body too large: the limit is {limit} bytes'],
  bodyTooLargeOpen: [
    'ERROR',
    200,
    'Request body too large: the limit is {limit} bytes without valid credentials in the headers (HTTP Basic, a Bearer JWT or the session cookie), {credentialedLimit} bytes with them',
  ],
  malformedHttp: ['ERROR', 400, 'Malformed HTTP request ({reason})'],
  internalError: ['FAULT', 200, 'Internal server error'],
  // customers (issue 15)
  notReseller: ['ACCESS_DENIED', 200, 'Access Denied: customer {id} is not a reseller or partner, so it cannot have sub-customers'],
  // object storage: storage.s3.* (issue 17)
  s3BucketNotFound: ['ERROR', 200, 'Could not find bucket'],
  s3CredentialNotFound: ['ERROR', 200, 'Could not find S3 credential'],
  s3BucketTaken: ['ERROR', 200, 'Bucket name {name} is taken; bucket names are unique across the endpoint'],
  s3BucketNotEmpty: ['ERROR', 200, 'Bucket {name} still holds objects; delete them first'],
};

it('holds exactly the pinned entries: code, HTTP status and message template', () => {
  const actual = Object.fromEntries(catalogEntries().map((e) => [e.key, [e.code, e.status, e.template]]));
  assert.deepEqual(actual, PINNED);
  for (const [key, entry] of Object.entries(infraErrors)) assert.equal(entry.key, key, `${key} is filed under its own name`);
});

/** What a FAULT says about one parameter (`error` values, and the end of the message). */
const PINNED_PROBLEMS: Record<string, string> = {
  required: 'is required',
  nul: 'must not contain NUL characters',
  loneSurrogate: 'must be valid Unicode text (it holds a lone surrogate)',
  tooDeep: 'is nested more than {depth} levels deep',
  mustBe: 'must be {what}',
  atMost: 'must be at most {limit}',
  atLeast: 'must be at least {limit}',
  longest: 'must be at most {limit} characters long',
  shortest: 'must be at least {limit} characters long',
  empty: 'must not be empty',
  unknownPermission: 'unknown permission "{permission}" (see apiuser.permissions.system)',
  contradictsStatus: 'contradicts status {status}',
  zoneName: 'must be a domain name such as example.com',
  nameTooLong: 'must be at most {max} characters',
  twoLabels: 'must have at least two labels, such as example.com',
  emptyLabel: 'has an empty label',
  labelTooLong: 'has a label longer than {max} characters',
  badLabel: 'has an invalid label "{label}" (letters, digits and hyphens; no hyphen at either end)',
  badOwnerLabel: 'has an invalid label "{label}" (letters, digits and hyphens, underscores; no hyphen at either end)',
  lookupText: 'must be a string: the name relative to the zone, "" or "@" for the apex',
  lookupRequired: 'is required: the name relative to the zone, "" or "@" for the apex',
  outsideZone: '"{name}" is not inside the zone {zone}',
  wildcard: 'may use "*" only as the whole leftmost label',
  ownerTooLong: 'makes a name longer than {max} characters',
  hostOrRoot: 'must be a host name, or "." for none',
  host: 'must be a host name',
  qualifiedHost: 'must be a fully qualified host name such as host.example.com, got "{value}"',
  integerRange: 'must be an integer from {min} to {max}',
  range: 'must be from {min} to {max}',
  text: 'must be a string',
  typeRequired: 'is required: one of {types}',
  ahashed: 'AHASHED is not supported by this server; use A records',
  typeUnknown: 'must be one of {types}',
  caaTag: 'must be issue, issuewild, iodef or another tag of 1-15 letters and digits',
  caaTagRequired: 'is required for CAA records: issue, issuewild or iodef',
  caaValueRequired: 'is required: the CAA value',
  valueRequired: 'is required: the record value',
  requiredFor: 'is required for {type} records ({min} to {max})',
  ipv4: 'must be an IPv4 address such as 192.0.2.1, got "{value}"',
  ipv6: 'must be an IPv6 address such as 2001:db8::1, got "{value}"',
  bytes: 'must be at most {max} bytes',
  nameserverDomain: "{name} is this server's nameserver domain {domain} (ns1..ns4.{domain}), which the server answers for itself",
  insideNameserverDomain: "{name} is inside this server's nameserver domain {domain} (ns1..ns4.{domain}), which the server answers for itself",
  publicSuffix: '{name} is a public suffix (on the Public Suffix List): its names belong to many owners; host a domain registered under it instead',
  wideReverse: '{name} is a reverse zone wider than a {width}: host at most a {width}, with at least {labels} labels before {suffix}, such as {example}',
  cnameAtApex: 'a CNAME cannot be at the zone apex',
  nsAtApex: 'NS records at the apex are made by the server; add NS only below the apex',
  cnameNotAlone: 'a CNAME must be the only record at its name, and {where} already has {types}',
  besideCname: '{where} has a CNAME record, which must be the only record at its name',
  domainId: 'must be a domain id',
  domainRequired: 'is required: the domain id (domainid, domainId, domainID) or the zone name (name)',
  notThatDomain: '{name} is not domain {id} ({zone})',
  hostedHere: '{name} is already hosted in this account (domain {id})',
  hosted: '{name} is already hosted',
  zoneClash: '{name} is inside or above a zone hosted by another customer',
  tooManyZones: 'would make more than {max} zones in this account; delete a zone first',
  tooManyRecords: 'would make more than {max} records in the zone {zone}; delete records first',
  recordId: 'must be a record id',
  recordIdRequired: 'is required: the record id',
  recordTwice: 'names a record more than once',
  recordMoves: 'a record cannot move to another domain',
  matchTypeRequired: 'is required to delete by match (or give the record id)',
  noRecords: 'must hold at least one record',
  noRecordIds: 'must hold at least one record id',
  recordObject: 'must be a record object',
  recordList: 'must be a list or a map of records',
  // catalogue
  periodUnknown: 'must be one of {periods}',
  // network family: sshkey.*, network.*, loadbalancer.* (issue 15)
  sshKeyShape: 'must be an OpenSSH public key: "<type> <base64> [comment]"',
  sshKeyType: 'has the key type "{type}"; accepted: {types}',
  sshKeyBase64: 'holds a key that is not valid base64',
  sshKeyMismatch: 'says {written} but its key data holds a {embedded} key',
  sshKeyBlob: 'is not a well-formed {type} key',
  sshKeyRsaBits: 'is an RSA key of {bits} bits; {min} to {max} bits are accepted',
  cidr: 'must be a network in CIDR form such as 192.0.2.0/24 or 2001:db8::/48',
  cidrHostBits: 'has host bits set: the network is {network}',
  prefixRange: 'must have a prefix length from /{min} to /{max} for IPv{family}',
  networkOverlap: 'overlaps network {id} ({network}) of this customer',
  ipAddress: 'must be an IPv4 or IPv6 address',
  outsideNetwork: '{address} is not a host address of {network}',
  addressTaken: '{address} is already in use',
  dataCentre: 'must be a data centre id or name (see dc.getall)',
  vlanTaken: 'VLAN {tag} already exists in data centre {dc}',
  vlanElsewhere: 'VLAN {id} is in data centre {dc}, not {wanted}',
  hostOrAddress: 'must be a host name or an IP address',
  // customer.* (issue 15)
  ownAccount: "cannot be changed on the caller's own customer, only on its sub-customers",
  emailAddress: 'must be an email address such as name@example.com',
  currencyCode: 'must be a currency code of three capital letters, such as AUD',
  username: 'must be 1 to 100 letters, digits and . _ @ + -',
  usernameTaken: 'is taken',
  loginNeedsBoth: 'is required with {other}: a login has both',
  // rctransaction.* (worker family)
  deviceId: 'must be a device id',
  startupJson: 'must be a JSON object written as a string, whose cloudInit holds userData, metaData or networkConfig strings',
  startupField: 'field {field} must be a string',
  confirmTransaction: '{type} on device {id} takes the server down or destroys it: send it again with confirmation true',
  startupCloudInit: 'field cloudInit must be an object of userData, metaData and networkConfig strings',
  // order.*, device.* (issue 15, orders helper)
  unknownProduct: 'unknown product code "{code}" (see product.getall)',
  unknownCustomer: "must be the id of the caller's customer or of one of its sub-customers",
  unknownDc: 'unknown data centre "{dc}" (see dc.getall)',
  notThatDc: '{location} is not the data centre given as dcId ({dc})',
  dcRequired: 'is required: the data centre (dcId or location)',
  notSoldIn: 'the product {product} is not sold in {dc}',
  hostname: 'must be a host name (letters, digits and hyphens in dot-separated labels)',
  atMostItems: 'must hold at most {limit} items',
  ipv4Count: 'asks for more than {max} IPv4 addresses in all',
  unknownOs: 'unknown operating system "{os}" (see operatingsystem.getall)',
  unknownTemplate: 'unknown template "{template}" (see template.getall)',
  deletedInOrder: 'DELETED removes a policy of an existing device; an order can only add policies',
  machineUsername: 'must be a user name: a lower-case letter or "_", then up to 31 letters, digits, "_" or "-"',
  timezone: 'must be a time zone name such as Australia/Sydney or UTC',
  portNumber: 'must be a port from 1 to 65535, or null for any',
  addressOrNetwork: 'must be an IP address or a network such as 192.0.2.0/24',
  tooManyPolicies: 'would leave more than {max} firewall policies on the device; delete some first',
  policyIdRequired: 'DELETED needs the id of the policy to remove',
  nothingToChange: 'nothing to change: give the new name',
  // object storage: storage.s3.* (issue 17)
  s3BucketName: '{problem}',
};

it('holds exactly the pinned per-parameter problems', () => {
  assert.deepEqual(Object.fromEntries(problemEntries().map((p) => [p.key, p.template])), PINNED_PROBLEMS);
  for (const [key, p] of Object.entries(infraProblems)) assert.equal(p.key, key, `${key} is filed under its own name`);
  assert.equal(infraProblems.integerRange({ min: 60, max: 604800 }), 'must be an integer from 60 to 604800');
  assert.equal(infraProblems.required(), 'is required');
});

it('renders every placeholder and declares the extra envelope keys of its code', () => {
  for (const e of catalogEntries()) {
    const names = [...e.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const values = Object.fromEntries(names.map((n) => [n, `<${n}>`]));
    const err = e(values as never);
    assert.equal(err.code, e.code);
    assert.equal(err.entry, e);
    assert.ok(!/\{\w+\}/.test(err.message), `${e.key} leaves a placeholder: ${err.message}`);
    for (const n of names) assert.ok(err.message.includes(`<${n}>`), `${e.key} renders {${n}}`);
    assert.deepEqual(e.extra, e.code === 'FAULT' ? ['error'] : e.code === 'RATE_LIMIT' ? ['retryAfter'] : []);
  }
});

it('builds the envelope of each kind as the clients read it', () => {
  assert.deepEqual(errorBody(infraErrors.accessDenied()), { code: 'ACCESS_DENIED', message: 'Access Denied' });
  assert.deepEqual(errorBody(infraErrors.invalidParameter({ name: 'ttl', problem: 'must be from 60 to 604800' })), {
    code: 'FAULT',
    message: 'Invalid parameter ttl: must be from 60 to 604800',
    error: { ttl: 'must be from 60 to 604800' },
  });
  // Several problems: the message names the first, `error` holds them all.
  const many = { 'data.0.type': 'is required: one of A', 'data.1.ttl': 'must be from 60 to 604800' };
  assert.deepEqual(errorBody(infraErrors.missingParameterDetail({ name: 'data.0.type', detail: 'one of A' }, many)), {
    code: 'FAULT',
    message: 'Missing parameter data.0.type: one of A',
    error: many,
  });
  assert.deepEqual(errorBody(infraErrors.missingParameter({ name: 'cmd' })), { code: 'FAULT', message: 'Missing parameter cmd', error: { cmd: 'is required' } });
  assert.deepEqual(errorBody(infraErrors.missingDomain({ name: 'domainId' })), {
    code: 'FAULT',
    message: 'Missing parameter domainId: the domain id (or name)',
    error: { domainId: 'is required (or name)' },
  });
  assert.deepEqual(errorBody(infraErrors.recordNotInDomain({ id: 7, domainId: 2 })), { code: 'ERROR', message: 'Could not find record 7 in domain 2' });
  const limited = rateLimited(0.2);
  assert.ok(limited instanceof RateLimited);
  assert.deepEqual(errorBody(limited), { code: 'RATE_LIMIT', message: 'Rate limit exceeded: try again in 1 second', retryAfter: 1 });
  assert.equal(rateLimited(4.1).message, 'Rate limit exceeded: try again in 5 seconds');
});

// Infra's code only: chat and dns may not import it (the layering rule), so nothing else can raise these.
const SRC = path.resolve(import.meta.dirname, '../../src/infra');
const CATALOG = path.join(SRC, 'errors.ts');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Where, outside the catalog, an Infra error is made from something other than a catalog entry. */
function literalErrors(files: { file: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { file, text } of files) {
    if (file === CATALOG) continue;
    text.split('\n').forEach((line, i) => {
      const where = `${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`;
      // Only the catalog constructs them: a message never reaches InfraError from a handler.
      if (/\bnew\s+(InfraError|RateLimited)\s*\(/.test(line)) found.push(where);
    });
    // A problem of a parameter comes from the catalog too: never a literal handed to the places that collect them.
    for (const m of text.matchAll(/(?:\bnew Bad\(|\.add\([^,()]+(?:\([^()]*\))?,|\bproblem:)\s*(['"`])/g)) {
      found.push(`${path.relative(SRC, file)}: a literal problem text at ${m[0]}`);
    }
    // A subclass (the transport's BodyTooLarge) hands super() a catalog entry, never a message.
    if (/extends\s+(InfraError|RateLimited)\b/.test(text)) {
      for (const m of text.matchAll(/\bsuper\(\s*(['"`]|[A-Z_]+\s*,)/g)) {
        found.push(`${path.relative(SRC, file)}: super(${m[1]}...) with a literal`);
      }
    }
  }
  return found;
}

it('finds no Infra error made outside the catalog', () => {
  const files = sources(SRC).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  assert.ok(
    files.some((f) => f.file === CATALOG),
    'the scan sees the catalog',
  );
  assert.deepEqual(literalErrors(files), []);
  // The check itself catches the old forms.
  const fake = path.join(SRC, 'commands', 'x.ts');
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal, as the check reads it
  assert.equal(literalErrors([{ file: fake, text: "throw new InfraError('ERROR', `Could not find ${what}`);" }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: "class A extends InfraError { constructor() { super('ERROR', 'too large'); } }" }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: 'throw new RateLimited(3);' }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: 'throw infraErrors.domainNotFound();' }]).length, 0);
  assert.equal(literalErrors([{ file: fake, text: "problems.add(e.field + 'type', 'a CNAME cannot be at the zone apex');" }]).length, 1);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal, as the check reads it
  assert.equal(literalErrors([{ file: fake, text: 'throw new Bad(`must be from ${min} to ${max}`);' }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: "throw infraErrors.invalidParameter({ name: 'id', problem: 'must be a record id' });" }]).length, 1);
  assert.equal(literalErrors([{ file: fake, text: 'problems.add(shape.at[i], P.recordId());' }]).length, 0);
});
