// Whether the incus driver's real tests can run here: an ssh client, a reachable Incus/LXD daemon
// (scripts/lxd-setup.sh prepares one, .ci/run calls it) and the debian/12 image. Null when they can;
// else the reason the tests print as they skip.
import { spawnSync } from 'node:child_process';
import { defaultIncusSocket, IncusDriver } from '../../src/infra/drivers/incus.js';

export const INCUS_IMAGE = process.env.KEEL_TEST_INCUS_IMAGE ?? 'debian/12';
export const incusSocket = process.env.KEEL_INCUS_SOCKET || defaultIncusSocket();

export async function incusUnavailable(opts: { needSsh?: boolean } = {}): Promise<string | null> {
  if (opts.needSsh && spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error) return 'no ssh-keygen/ssh client on this host';
  const probe = new IncusDriver({ socketPath: incusSocket, requestTimeoutMs: 5000 });
  try {
    const d = await probe.describe();
    if (!(await probe.imageExists(INCUS_IMAGE))) return `the ${d.server} daemon at ${incusSocket} has no image ${INCUS_IMAGE} (run scripts/lxd-setup.sh)`;
    return null;
  } catch (err) {
    return `${(err as Error).message} (run scripts/lxd-setup.sh as root)`;
  } finally {
    await probe.close();
  }
}
