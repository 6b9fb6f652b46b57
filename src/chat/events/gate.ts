// The fence that keeps POST /register's snapshot consistent with the event stream: writes that
// publish events hold the gate from the start of their transaction until their events are
// published, and a registration holds it while it creates its queue and reads the initial state.
// The two kinds never overlap, so every event is either committed and published before the queue
// exists (and so is in the state) or committed after the state was read (and so is delivered):
// never both, never neither. Many writers may hold it at once, as may many registrations.
// In-process only: a bus across nodes needs a commit sequence instead (README, issue 5).

type Kind = 'write' | 'snapshot';

export class SnapshotGate {
  private active = { write: 0, snapshot: 0 };
  private waiting: { write: (() => void)[]; snapshot: (() => void)[] } = { write: [], snapshot: [] };

  /** Runs a write whose events are published before `work` resolves. */
  write<T>(work: () => Promise<T>): Promise<T> {
    return this.hold('write', work);
  }

  /** Runs a registration's queue creation and state read. */
  snapshot<T>(work: () => Promise<T>): Promise<T> {
    return this.hold('snapshot', work);
  }

  private async hold<T>(kind: Kind, work: () => Promise<T>): Promise<T> {
    const other: Kind = kind === 'write' ? 'snapshot' : 'write';
    // Waiting behind the other kind's queue as well keeps a stream of either from starving the other.
    if (this.active[other] > 0 || this.waiting[other].length > 0) {
      await new Promise<void>((resolve) => this.waiting[kind].push(resolve));
    } else {
      this.active[kind]++;
    }
    try {
      return await work();
    } finally {
      this.active[kind]--;
      if (this.active[kind] === 0) this.admit(other);
    }
  }

  private admit(kind: Kind): void {
    const released = this.waiting[kind];
    if (!released.length) return;
    this.waiting[kind] = [];
    this.active[kind] += released.length;
    for (const resolve of released) resolve();
  }
}
