// A seeded pseudo-random generator for the fuzz tests: the same seed gives the same requests on
// every machine, so a failure printed with its seed can be run again.

/** mulberry32: small, fast, and the same sequence for the same seed everywhere; numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
