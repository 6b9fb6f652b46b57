// What can be ordered, where, and at what price: the catalogue behind product.*, productgroup.*,
// pricing.get, dc.*, operatingsystem.getall, installimage.getall, template.getall, isoimage.getall,
// and the checks and prices of order.create. It is configuration, not data callers write: the default
// below (a realistic catalogue, so a fresh `keel serve` can take an order) or an operator's catalogue
// file, read once at start and the same for every customer.

/** A data centre, as dc.* shows it and orders name it (by id, name or location). */
export interface DataCentre {
  id: number;
  /** The provider's DC name, e.g. RC-AU-GLOBESW1 (device `dcName`). */
  name: string;
  /** The facility code orders may give instead of `dcId`, e.g. GLOBALSWITCH-SYD1 (device extra LOCATION). */
  location: string;
  description: string;
  /** ISO 3166 alpha-2, upper case: the `_{country}` of product codes sold there. */
  country: string;
  city: string;
}

/** Bounds of one orderable resource: an order outside them is refused, naming the field. */
export interface Range {
  min: number;
  max: number;
  /** What an order that leaves the field out gets. */
  default: number;
}

/** Prices in the catalogue's currency, per month; the period multipliers below apply to them. */
export interface ServerPrices {
  /** The base price of the product per month. */
  base: number;
  perCpu: number;
  perMemoryGB: number;
  /** Per GB of storage by type. */
  perStorageGB: { MAGNETIC: number; SSD: number };
  /** Per GB of monthly traffic above the included amount. */
  perTrafficGB: number;
  perIPv4: number;
}

/** A server product: SERVER_VIRTUAL_{class}_{country}. */
export interface Product {
  code: string;
  /** The productgroup it belongs to. */
  groupCode: string;
  name: string;
  description: string;
  /** VIRTUALSERVER: the contract type orders of it make. */
  contractType: string;
  /** The data centres (ids) it is sold in: those of its country. */
  dcIds: number[];
  cpu: Range;
  memoryGB: Range;
  /** Per disk. */
  storageGB: Range;
  /** Disks per server. */
  disks: Range;
  trafficGB: Range;
  /** Included in the base price. */
  includedTrafficGB: number;
  ipv4: Range;
  nics: Range;
  prices: ServerPrices;
}

export interface ProductGroup {
  code: string;
  name: string;
  description: string;
}

/** An operating system a server can be installed with (install.operatingSystem). */
export interface OperatingSystem {
  /** As orders send it, e.g. UBUNTU22.04_64, DEBIAN12_64, WINDOWS2022STD, SELFINSTALLEDFROMISO. */
  code: string;
  name: string;
  family: 'linux' | 'windows' | 'none';
  /** Per month on top of the product. */
  price: number;
  /** The Incus/LXD image alias the incus driver launches (linux only). */
  image?: string;
}

/** install images, templates and ISO images: listed for clients, chosen by code. */
export interface NamedImage {
  code: string;
  name: string;
  description: string;
}

/** Billing periods and what a month's price is multiplied by for each. */
export interface Period {
  code: 'MONTHLY' | 'QUARTERLY' | 'SEMIANNUALLY' | 'ANNUALLY';
  months: number;
  /** The fraction of the undiscounted price charged (0.9 = 10% off). */
  factor: number;
}

export interface Catalogue {
  currency: string;
  dataCentres: DataCentre[];
  productGroups: ProductGroup[];
  products: Product[];
  operatingSystems: OperatingSystem[];
  installImages: NamedImage[];
  templates: NamedImage[];
  isoImages: NamedImage[];
  periods: Period[];
}

const DATA_CENTRES: DataCentre[] = [
  { id: 19, name: 'RC-AU-GLOBESW1', location: 'GLOBALSWITCH-SYD1', description: 'Global Switch Sydney', country: 'AU', city: 'Sydney' },
  { id: 20, name: 'RC-AU-EQUINIX1', location: 'EQUINIX-SYD1', description: 'Equinix SY1 Sydney', country: 'AU', city: 'Sydney' },
  { id: 21, name: 'RC-AU-VOCUS530', location: 'VOCUS530-MEL1', description: 'Vocus 530 Collins Melbourne', country: 'AU', city: 'Melbourne' },
  { id: 22, name: 'RC-AU-VOCUSPER', location: 'VOCUSIX-PER1', description: 'Vocus IX Perth', country: 'AU', city: 'Perth' },
  { id: 30, name: 'RC-NZ-SPARKAKL', location: 'SPARK-AKL1', description: 'Spark Auckland', country: 'NZ', city: 'Auckland' },
  { id: 40, name: 'RC-SG-EQUINIX1', location: 'EQUINIX-SG1', description: 'Equinix SG1 Singapore', country: 'SG', city: 'Singapore' },
  { id: 50, name: 'RC-US-EQUINIXLA', location: 'EQUINIX-LA1', description: 'Equinix LA1 Los Angeles', country: 'US', city: 'Los Angeles' },
  { id: 60, name: 'RC-UK-TELEHOUSE', location: 'TELEHOUSE-LON1', description: 'Telehouse North London', country: 'GB', city: 'London' },
];

/** The four server classes, with what tells them apart: sizes, and what is cheap in each. */
const CLASSES: { cls: 'BUDGET' | 'PERFORMANCE' | 'STORAGE' | 'TRAFFIC'; name: string; cpuMax: number; memMax: number; diskMax: number; traffic: number; prices: ServerPrices }[] = [
  {
    cls: 'BUDGET',
    name: 'Budget virtual server',
    cpuMax: 8,
    memMax: 32,
    diskMax: 1000,
    traffic: 1000,
    prices: { base: 5, perCpu: 4, perMemoryGB: 3, perStorageGB: { MAGNETIC: 0.05, SSD: 0.15 }, perTrafficGB: 0.05, perIPv4: 3 },
  },
  {
    cls: 'PERFORMANCE',
    name: 'Performance virtual server',
    cpuMax: 32,
    memMax: 256,
    diskMax: 4000,
    traffic: 2000,
    prices: { base: 10, perCpu: 7, perMemoryGB: 5, perStorageGB: { MAGNETIC: 0.08, SSD: 0.2 }, perTrafficGB: 0.05, perIPv4: 3 },
  },
  {
    cls: 'STORAGE',
    name: 'Storage virtual server',
    cpuMax: 16,
    memMax: 64,
    diskMax: 16000,
    traffic: 2000,
    prices: { base: 10, perCpu: 5, perMemoryGB: 4, perStorageGB: { MAGNETIC: 0.03, SSD: 0.12 }, perTrafficGB: 0.05, perIPv4: 3 },
  },
  {
    cls: 'TRAFFIC',
    name: 'Traffic virtual server',
    cpuMax: 16,
    memMax: 64,
    diskMax: 2000,
    traffic: 20000,
    prices: { base: 15, perCpu: 5, perMemoryGB: 4, perStorageGB: { MAGNETIC: 0.08, SSD: 0.2 }, perTrafficGB: 0.01, perIPv4: 3 },
  },
];

function serverProducts(): Product[] {
  const countries = [...new Set(DATA_CENTRES.map((d) => d.country))];
  const products: Product[] = [];
  for (const c of CLASSES) {
    for (const country of countries) {
      products.push({
        code: `SERVER_VIRTUAL_${c.cls}_${country}`,
        groupCode: 'SERVER_VIRTUAL',
        name: `${c.name} (${country})`,
        description: `${c.name} in ${DATA_CENTRES.filter((d) => d.country === country)
          .map((d) => d.city)
          .filter((v, i, a) => a.indexOf(v) === i)
          .join(', ')}`,
        contractType: 'VIRTUALSERVER',
        dcIds: DATA_CENTRES.filter((d) => d.country === country).map((d) => d.id),
        cpu: { min: 1, max: c.cpuMax, default: 1 },
        memoryGB: { min: 1, max: c.memMax, default: 1 },
        storageGB: { min: 10, max: c.diskMax, default: 20 },
        disks: { min: 1, max: 8, default: 1 },
        trafficGB: { min: 0, max: c.traffic * 10, default: c.traffic },
        includedTrafficGB: c.traffic,
        ipv4: { min: 0, max: 16, default: 1 },
        nics: { min: 1, max: 4, default: 1 },
        prices: c.prices,
      });
    }
  }
  return products;
}

export const DEFAULT_CATALOGUE: Catalogue = {
  currency: 'AUD',
  dataCentres: DATA_CENTRES,
  productGroups: [{ code: 'SERVER_VIRTUAL', name: 'Virtual servers', description: 'Virtual servers on shared hosts, billed monthly' }],
  products: serverProducts(),
  operatingSystems: [
    { code: 'DEBIAN12_64', name: 'Debian 12 (64-bit)', family: 'linux', price: 0, image: 'debian/12' },
    { code: 'DEBIAN11_64', name: 'Debian 11 (64-bit)', family: 'linux', price: 0, image: 'debian/11' },
    { code: 'UBUNTU24.04_64', name: 'Ubuntu 24.04 LTS (64-bit)', family: 'linux', price: 0, image: 'ubuntu/24.04' },
    { code: 'UBUNTU22.04_64', name: 'Ubuntu 22.04 LTS (64-bit)', family: 'linux', price: 0, image: 'ubuntu/22.04' },
    { code: 'UBUNTU18.04_64', name: 'Ubuntu 18.04 LTS (64-bit)', family: 'linux', price: 0, image: 'ubuntu/18.04' },
    { code: 'CENTOS7.4_64', name: 'CentOS 7.4 (64-bit)', family: 'linux', price: 0, image: 'centos/7' },
    { code: 'ROCKY9_64', name: 'Rocky Linux 9 (64-bit)', family: 'linux', price: 0, image: 'rockylinux/9' },
    { code: 'WINDOWS2022STD', name: 'Windows Server 2022 Standard', family: 'windows', price: 30 },
    { code: 'WINDOWS2016STD', name: 'Windows Server 2016 Standard', family: 'windows', price: 30 },
    { code: 'SELFINSTALLEDFROMISO', name: 'Installed by the customer from an ISO image', family: 'none', price: 0 },
  ],
  installImages: [
    { code: 'DEBIAN12_64_MINIMAL', name: 'Debian 12 minimal', description: 'Debian 12 with SSH and cloud-init only' },
    { code: 'UBUNTU24.04_64_MINIMAL', name: 'Ubuntu 24.04 minimal', description: 'Ubuntu 24.04 with SSH and cloud-init only' },
  ],
  templates: [
    { code: 'LAMP', name: 'LAMP stack', description: 'Apache, MariaDB and PHP on Debian' },
    { code: 'DOCKER', name: 'Docker host', description: 'Docker Engine on Debian' },
  ],
  isoImages: [
    { code: 'DEBIAN12_NETINST', name: 'Debian 12 netinst', description: 'Debian 12 network installer ISO' },
    { code: 'WINDOWS2022_EVAL', name: 'Windows Server 2022 evaluation', description: 'Windows Server 2022 evaluation ISO' },
  ],
  periods: [
    { code: 'MONTHLY', months: 1, factor: 1 },
    { code: 'QUARTERLY', months: 3, factor: 0.97 },
    { code: 'SEMIANNUALLY', months: 6, factor: 0.95 },
    { code: 'ANNUALLY', months: 12, factor: 0.9 },
  ],
};

/** Look-ups over one catalogue, built once at start (app.ts) and shared by every command. */
export class CatalogueIndex {
  readonly catalogue: Catalogue;
  private readonly products: Map<string, Product>;
  private readonly dcsById: Map<number, DataCentre>;
  private readonly dcsByName: Map<string, DataCentre>;
  private readonly oses: Map<string, OperatingSystem>;

  constructor(catalogue: Catalogue) {
    this.catalogue = catalogue;
    this.products = new Map(catalogue.products.map((p) => [p.code.toUpperCase(), p]));
    this.dcsById = new Map(catalogue.dataCentres.map((d) => [d.id, d]));
    this.dcsByName = new Map(catalogue.dataCentres.flatMap((d) => [[d.name.toUpperCase(), d] as const, [d.location.toUpperCase(), d] as const]));
    this.oses = new Map(catalogue.operatingSystems.map((o) => [o.code.toUpperCase(), o]));
  }

  /** A product by code, whatever its case. */
  product(code: string): Product | undefined {
    return this.products.get(code.toUpperCase());
  }

  /** A data centre by id (number or numeric string), DC name or location code. */
  dataCentre(ref: number | string): DataCentre | undefined {
    if (typeof ref === 'number') return this.dcsById.get(ref);
    const s = ref.trim();
    if (/^\d+$/.test(s)) return this.dcsById.get(Number(s));
    return this.dcsByName.get(s.toUpperCase());
  }

  operatingSystem(code: string): OperatingSystem | undefined {
    return this.oses.get(code.toUpperCase());
  }
}
