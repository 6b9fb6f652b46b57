// The machines behind devices: what the provisioning worker asks of a driver. Two implementations,
// one conformance suite (test/infra/drivers/): `sim` (the default; the provider's states and
// timings, no machine) and `incus` (real system containers through the Incus/LXD REST API).
// The API's states (orders, contracts, transactions, power) live in the store and are moved by the
// worker (infra/provisioning/); a driver only does the machine's part of a step and reports how
// long such a step takes, so a step that was under way when the process died can be resumed.

/** cloud-init data a STARTUP transaction may carry (rctransaction.create `data`). */
export interface CloudInit {
  userData?: string;
  metaData?: string;
  networkConfig?: string;
}

/** What a machine is made from: the device's order, as the catalogue checked it. */
export interface MachineSpec {
  /** A name unique within the driver (the worker uses `keel-<deviceId>`). */
  name: string;
  hostname: string;
  cpu: number;
  memoryGB: number;
  disks: { sizeGB: number; type: 'MAGNETIC' | 'SSD' }[];
  /** The catalogue's operating system code, and its Incus image alias for linux systems. */
  operatingSystem: string;
  image?: string;
  /** Public keys installed for the default user (sshkey.*), through cloud-init. */
  sshKeys: string[];
  /**
   * Credentials from the order (productDetails.credentials). The store keeps no plaintext password:
   * the worker passes the order's crypt(3) `$6$` hash (cloud-init's `hashed_passwd`); `password` is
   * set only by a caller that holds a plaintext one (tests).
   */
  credentials: { username: string; password?: string; passwordHash?: string }[];
  postInstallScript?: string;
}

export type PowerState = 'ONLINE' | 'OFFLINE';

/** What the driver sees of a machine now. */
export interface MachineState {
  power: PowerState;
  /** Addresses the machine has (incus: the instance's; sim: none, the store allocates them). */
  ipv4: string[];
  ipv6: string[];
}

/** A driver step's failure: `message` is shown to API callers as the transaction's statusInfo. */
export class DriverError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable = false) {
    super(message);
    this.name = 'DriverError';
    this.retryable = retryable;
  }
}

export interface MachineDriver {
  readonly kind: 'sim' | 'incus';
  /**
   * How long each step takes, in milliseconds of the injectable clock: the worker keeps a
   * transaction COMMENCED that long (sim: by speed; incus: the real call's time, so 0 here).
   */
  stepMs(step: 'create' | 'start' | 'stop' | 'reconfigure' | 'destroy'): number;
  /** Makes the machine, stopped; idempotent for a name that exists (a step resumed after a crash). */
  create(spec: MachineSpec): Promise<void>;
  start(name: string, cloudInit?: CloudInit): Promise<void>;
  /** graceful: the guest shuts down (SHUTDOWN, SAFESHUTDOWN); force: power cut (FORCESHUTDOWN). */
  stop(name: string, how: 'graceful' | 'force'): Promise<void>;
  /** REFRESHCONFIG: applies the spec (sizes, keys) to the existing machine. */
  reconfigure(spec: MachineSpec): Promise<void>;
  /** CANCEL: removes the machine; a name that is already gone is not an error. */
  destroy(name: string): Promise<void>;
  /** The machine's state, or null when it does not exist. */
  state(name: string): Promise<MachineState | null>;
  close(): Promise<void>;
}
