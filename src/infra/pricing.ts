// What an ordered server costs per month, from its product's prices (catalogue.ts ServerPrices) and
// its operating system's, as whole cents; and order.create's `changeTxt`, one line per priced item
// in the provider's words ("Add NEW CPU: 2 ($14.00)\n"), keyed as the device's `extra` keys are.
import type { OperatingSystem, Product } from './catalogue.js';
import type { DataCentre } from './catalogue.js';
import type { OrderDetails } from './orders-details.js';

export interface PriceLine {
  /** The `extra` key the item shows under on the device: CPU, MEMORYGB, STORAGEGB ... */
  key: string;
  /** What was ordered of it, as the line shows it. */
  value: string;
  cents: number;
}

export interface ServerPrice {
  lines: PriceLine[];
  /** One server, per month. */
  cents: number;
}

/** A price in the catalogue's units (a currency amount, possibly fractional) as whole cents. */
export const toCents = (amount: number): number => Math.round(amount * 100);

/** One server's monthly price, item by item. */
export function serverPrice(product: Product, dc: DataCentre, os: OperatingSystem | undefined, d: OrderDetails): ServerPrice {
  const p = product.prices;
  const storageGB = d.storage.reduce((sum, s) => sum + s.sizeGB, 0);
  const storageCents = d.storage.reduce((sum, s) => sum + toCents(s.sizeGB * p.perStorageGB[s.type]), 0);
  const ipv4 = d.nics.reduce((sum, n) => sum + n.ipv4, 0);
  const extraTraffic = Math.max(0, d.trafficGB - product.includedTrafficGB);
  const lines: PriceLine[] = [
    { key: 'LOCATION', value: dc.location, cents: toCents(p.base) },
    { key: 'CPU', value: String(d.cpu), cents: toCents(d.cpu * p.perCpu) },
    { key: 'MEMORYGB', value: String(d.memoryGB), cents: toCents(d.memoryGB * p.perMemoryGB) },
    { key: 'STORAGEGB', value: String(storageGB), cents: storageCents },
    { key: 'TRAFFICGB', value: String(d.trafficGB), cents: toCents(extraTraffic * p.perTrafficGB) },
    { key: 'IPV4', value: String(ipv4), cents: toCents(ipv4 * p.perIPv4) },
  ];
  if (os) lines.push({ key: 'OPERATINGSYSTEM', value: os.code, cents: toCents(os.price) });
  return { lines, cents: lines.reduce((sum, l) => sum + l.cents, 0) };
}

/** Cents as the provider writes money: "$14.00". */
export function money(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

/** order.create's changeTxt: each item of one server on a line of its own, every line ending in "\n". */
export function changeText(price: ServerPrice): string {
  return price.lines.map((l) => `Add NEW ${l.key}: ${l.value} (${money(l.cents)})\n`).join('');
}

/** "option:price" pairs as the device's `extra` shows a price list ("1:7" = 7 per unit). */
export function priceList(entries: [string | number, number][]): string {
  return entries.map(([option, amount]) => `${option}:${Number(amount.toFixed(4))}`).join(',');
}
