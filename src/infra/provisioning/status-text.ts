// What a transaction's statusInfo (and a failed contract's contractInfo) says, in one place: pollers
// show it to people, so it names what happened and, on failure, why.
export const STATUS_TEXT = {
  commenced: (type: string) => `${type} under way`,
  completed: {
    STARTUP: 'The server was started',
    SHUTDOWN: 'The server was shut down',
    SAFESHUTDOWN: 'The server was shut down',
    FORCESHUTDOWN: 'The server was powered off',
    REFRESHCONFIG: 'The configuration was applied',
    CANCEL: 'The server was cancelled and its machine removed',
    CLOSEVNC: 'No VNC console was open',
  } as Record<string, string>,
  vncUnavailable: 'VNC consoles are not offered by this server: reach the device over SSH at its primary IP',
  deviceGone: 'The device was cancelled before this transaction ran',
  driverFailed: (type: string, message: string) => `${type} failed: ${message}`,
  internal: (type: string) => `${type} failed: internal error (see the server log)`,
  retrying: (message: string, attempt: number) => `retrying after: ${message} (attempt ${attempt})`,
  createFailed: (message: string) => `The server could not be built: ${message}`,
  poolExhausted: (cidr: string) => `no free address in the pool ${cidr}`,
} as const;
