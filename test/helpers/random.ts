/**
 * A small seeded generator (xorshift32) for tests that build random cases: the same seed gives the
 * same case, so a failure that names its seed can be replayed.
 */
export class Random {
  private state: number
  constructor(seed: number) {
    this.state = (seed >>> 0) || 0x9e3779b9
  }

  next(): number {
    let x = this.state
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    this.state = x
    return x
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : this.next() % n
  }

  /** An integer in [low, high]. */
  range(low: number, high: number): number {
    return low + this.int(high - low + 1)
  }

  chance(p: number): boolean {
    return this.next() / 0x1_0000_0000 < p
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T
  }

  /** Random bytes into `target` from `start` to `end`. */
  fill(target: Uint8Array, start = 0, end = target.length): void {
    for (let index = start; index < end; index++) target[index] = this.next() & 0xff
  }

  bytes(count: number): Buffer {
    const out = Buffer.alloc(count)
    this.fill(out)
    return out
  }

  text(alphabet: readonly string[], count: number): string {
    let out = ''
    for (let index = 0; index < count; index++) out += this.pick(alphabet)
    return out
  }
}
