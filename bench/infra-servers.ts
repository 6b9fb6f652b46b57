// Infra servers (issue 15) against a real `keel serve` on the sim driver at speed instant: 10,000
// devices made through the API (orders for five sub-customers of the first customer, which sees all
// of them), then device.get over REST (as Terraform polls it) and device.getall (a window of 50 of
// the 10,000) per second against bare node:http in the same run; then 1,000 orders created and
// confirmed at once, timed until every contract is ACTIVE, with the server's CPU per order.
import { BARE_BODY, basicAuth, cpuSeconds, describeLoad, load, note, startBareServer, startKeel, withServers, type Benchmark, type Figure, type LoadResult } from './lib.js';

const API = '/api/rest/v2.10';
const OK = '"code":"OK"';
const DEVICES = 10_000;
/** The per-customer bound on servers is 2,000: the devices are spread over sub-customers. */
const PER_CUSTOMER = 2_000;
/** The most servers one order may ask for. */
const PER_ORDER = 100;
const BURST = 1_000;
/** Issue 15: device.get at 0.4x bare node:http. */
const DEVICE_GET_TARGET = 0.4;

type Reply = Record<string, any>;

function figure(name: string, r: LoadResult, target?: number): Figure {
  return { name, value: Math.round(r.rps), unit: 'req/s', baseline: target === undefined && name === 'bare' ? undefined : 'bare', target, detail: describeLoad(r) };
}

/** Runs fn over items, `lanes` at a time. */
async function inLanes<T>(items: T[], lanes: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

export const benchmark: Benchmark = {
  name: 'infra-servers',
  summary: `device.get and device.getall over ${DEVICES} devices vs bare node:http; ${BURST} orders confirmed at once until ACTIVE (sim, instant)`,
  async run() {
    return withServers([startBareServer, () => startKeel({ args: ['--infra-sim-speed', 'instant'] })], async (bare, keel) => {
      const authorization = basicAuth(keel.apiUuid, keel.apiSecret);
      const cmd = async (name: string, params: Record<string, unknown> = {}): Promise<Reply> => {
        const res = await fetch(`${keel.url}${API}/json.php`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ cmd: name, ...params }) });
        const body = (await res.json()) as Reply;
        if (body.code !== 'OK') throw new Error(`${name}: ${JSON.stringify(body).slice(0, 300)}`);
        return body;
      };
      const order = async (customerId: number, quantity: number): Promise<number[]> => {
        const created = await cmd('order.create', {
          productCode: 'SERVER_VIRTUAL_BUDGET_AU',
          customerId: String(customerId),
          quantity,
          productDetails: { hostname: 'bench', credentials: null, install: { operatingSystem: 'DEBIAN12_64' }, cpu: 1, memoryGB: 1, dcId: '19' },
        });
        return (await cmd('order.confirm', { orderId: String(created.orderId) })).contractID as number[];
      };
      /** Waits until none of the customer's contracts is PENDING (order.contract.getall's total, `matches`). */
      const waitActive = async (customers: number[], what: string): Promise<void> => {
        const deadline = Date.now() + 600_000;
        for (;;) {
          let pending = 0;
          for (const customerId of customers) pending += Number((await cmd('order.contract.getall', { customerId, status: 'PENDING', resWindow: 1 })).matches);
          if (pending === 0) return;
          if (Date.now() > deadline) throw new Error(`${what}: ${pending} contracts still PENDING after 10 minutes`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };

      // Seed: five sub-customers of 2,000 servers each, in orders of 100.
      const seedStarted = Date.now();
      const subs: number[] = [];
      for (let i = 0; i < DEVICES / PER_CUSTOMER + 1; i++) subs.push((await cmd('customer.create', { companyName: `Bench ${i}` })).customer.id);
      const seeded = new Set<number>();
      const seedOrders = subs.slice(0, DEVICES / PER_CUSTOMER).flatMap((c) => Array.from({ length: PER_CUSTOMER / PER_ORDER }, () => c));
      await inLanes(seedOrders, 8, async (c) => {
        for (const id of await order(c, PER_ORDER)) seeded.add(id);
      });
      await waitActive(subs.slice(0, DEVICES / PER_CUSTOMER), 'seed');
      note(`seeded ${seeded.size} devices through the API (orders of ${PER_ORDER}, ${subs.length - 1} sub-customers) in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);

      const devices = (await cmd('device.getall', { resWindow: 1 })) as Reply;
      const total = Number(devices.matches ?? devices.count ?? 0);
      const someId = Number(devices.devices[0].deviceId);
      note(`device.getall sees ${total} devices; device.get reads ${someId}`);

      const bareRun = await load(bare, { path: '/', expect: BARE_BODY });
      note(`bare ${Math.round(bareRun.rps)} req/s`);
      const get = await load(keel, { path: `${API}/devices/${someId}`, headers: { authorization }, expect: OK });
      note(`device.get ${Math.round(get.rps)} req/s (${(get.rps / bareRun.rps).toFixed(2)}x)`);
      const getall = await load(keel, {
        path: `${API}/json.php`,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ cmd: 'device.getall', resStart: 5000, resWindow: 50 }),
        expect: OK,
      });
      note(`device.getall ${Math.round(getall.rps)} req/s`);

      // 1,000 orders at once for the sixth sub-customer: created and confirmed concurrently, then
      // timed until every contract is ACTIVE; the server's CPU over the whole burst, per order.
      const burstCustomer = subs[subs.length - 1];
      const cpuBefore = cpuSeconds(keel.pid);
      const burstStarted = Date.now();
      const burst = new Set<number>();
      await inLanes(
        Array.from({ length: BURST }, () => burstCustomer),
        64,
        async (c) => {
          for (const id of await order(c, 1)) burst.add(id);
        },
      );
      const confirmedMs = Date.now() - burstStarted;
      await waitActive([burstCustomer], 'burst');
      const burstMs = Date.now() - burstStarted;
      const cpuAfter = cpuSeconds(keel.pid);
      const cpuPerOrder = cpuBefore !== undefined && cpuAfter !== undefined ? Math.round(((cpuAfter - cpuBefore) * 1e6) / BURST) : undefined;
      note(`${BURST} orders created and confirmed in ${confirmedMs} ms, all ACTIVE after ${burstMs} ms, server CPU ${cpuPerOrder ?? '?'} us per order (polling included)`);

      return [
        figure('bare', bareRun),
        figure('device-get', get, DEVICE_GET_TARGET),
        figure('device-getall', getall),
        { name: 'burst-active', value: burstMs, unit: 'ms', detail: `${BURST} orders created and confirmed at once (64 at a time), until every contract is ACTIVE; confirmed after ${confirmedMs} ms` },
        ...(cpuPerOrder !== undefined
          ? [{ name: 'burst-cpu', value: cpuPerOrder, unit: 'us/order', detail: 'server CPU over the burst (create, confirm, activation, the polling of contracts), per order' }]
          : []),
      ];
    });
  },
};
