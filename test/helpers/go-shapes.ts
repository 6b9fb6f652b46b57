// The Go client's structs (RackCorpCloud/rackcorp-api-go, which Terraform drives) as shapes for
// assertGoShape: what each answer must decode into, field by field and type by type.
import { Nullable, type GoShape } from './go-types.js';

/** GO FirewallPolicy (TF reads it from the device). */
export const POLICY: GoShape = {
  id: 'int',
  direction: 'string',
  policy: 'string',
  order: 'int',
  comment: 'string',
  ipAddressFrom: 'string',
  ipAddressTo: 'string',
  protocol: 'string',
  portFrom: Nullable('string'),
  portTo: Nullable('string'),
  deviceId: 'int',
  deviceID: 'string',
  dateCreated: 'int',
  dateModified: 'int',
};
/** GO Device (device.get), with the fixture's other fields. */
export const DEVICE: GoShape = {
  deviceId: 'int',
  name: 'string',
  customerId: 'int',
  primaryIP: 'string',
  status: 'string',
  dcid: 'int',
  dcId: 'int',
  firewallPolicies: [POLICY],
  stdName: 'string',
  dateCreated: 'int',
  dateModified: 'int',
  trafficShared: 'bool',
  trafficCurrent: 'string',
  trafficEstimated: 'number',
  trafficMB: 'int',
  dcName: 'string',
  extra: { SYS_POWERSWITCH: 'string', SYS_POWERSTATUS: 'string', VMMEMORY: 'int', LOCATION: 'string', '*': 'string' },
  id: 'string',
  ips: [{ ipAddress: 'string', primary: 'bool', routeType: 'string', networkId: 'int', deviceId: 'int', portId: 'int' }],
  ports: [{ name: 'string', deviceInterface: 'string', status: 'string', speedMbit: 'string', bridge: 'bool', deviceId: 'int', deviceVlanId: ['string'] }],
  networkRoutes: ['any'],
  assets: ['any'],
  // The doc pages' set.
  type: 'string',
  customerid: 'int',
  operationalStatus: 'string',
};
/** GO deviceGetAllDevice (device.getall's elements): ids as numbers or numeric strings, ports' deviceInterface an int. */
export const LISTED: GoShape = {
  id: 'numstr',
  deviceId: 'numstr',
  customerId: 'numstr',
  name: 'string',
  stdName: 'string',
  status: 'string',
  trafficMB: 'numstr',
  dateCreated: 'numstr',
  dateModified: 'numstr',
  primaryIP: 'string',
  trafficShared: 'bool',
  dcName: 'string',
  type: 'string',
  ports: [{ deviceInterface: 'int', activityInMbit: 'numstr', activityOutMbit: 'numstr', status: 'string' }],
  osGuess: 'string',
  osState: 'string',
  onlineStatus: 'string',
  vmhostName: 'string',
  vmhostId: 'numstr',
  trafficCurrent: 'numstr',
  trafficEstimated: 'numstr',
  dcId: 'numstr',
  extra: 'any',
};

/** GO order.go and orderContract.go. */
export const CREATED: GoShape = { code: 'string', message: 'string', orderId: 'int', changeTxt: 'string' };
export const CONFIRMED: GoShape = { code: 'string', message: 'string', contractID: ['int'] };
export const ORDER: GoShape = { orderId: 'string', customerId: 'string', status: 'string', contractId: 'string' };
export const CONTRACT: GoShape = {
  contractId: 'string',
  customerId: 'string',
  deviceID: 'string',
  status: 'string',
  type: 'string',
  serviceBillId: 'string',
  contractInfo: 'string',
  currency: 'string',
  created: 'int',
  modified: 'int',
  lastBilled: 'bool',
  referenceID: 'string',
  notes: Nullable('string'),
};

/** GO transaction.go: createdTransaction (rctransaction.create's `data`, REST; `rcTransaction`, cmd). */
export const TRANSACTION_CREATED: GoShape = {
  rcTransactionId: 'int',
  confirmationRequired: 'bool',
  confirmationText: 'string',
  objType: 'string',
  objId: 'string',
  type: 'string',
  data: Nullable('string'),
};
/** GO existingTransaction (rctransaction.get's `rcTransaction`, rctransaction.getall's elements). */
export const TRANSACTION: GoShape = {
  rcTransactionId: 'string',
  objType: 'string',
  objId: 'string',
  method: 'string',
  data: Nullable('string'),
  status: 'string',
  statusInfo: 'string',
};
/** GO transactionGetAllResponse: both keys always there, the list never null. */
export const TRANSACTIONS: GoShape = { code: 'string', message: 'string', matches: 'int', rcTransactions: [TRANSACTION] };
