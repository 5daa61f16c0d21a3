/**
 * A binary hash tree built as the leaves arrive, in the manner of RHash's `tth.c`: a stack holds
 * the roots of complete subtrees, at most one per height, and two of the same height merge at
 * once. At the end the stack is folded from the right, which gives the trees that promote a lone
 * node to the level above unchanged (THEX §2.1). Memory is O(log n) digests.
 */
export class MerkleStack {
  readonly #stack: { height: number, digest: Uint8Array }[] = []
  readonly #parent: (left: Uint8Array, right: Uint8Array) => Uint8Array

  constructor(parent: (left: Uint8Array, right: Uint8Array) => Uint8Array) {
    this.#parent = parent
  }

  get leaves(): number {
    return this.#stack.reduce((total, node) => total + 2 ** node.height, 0)
  }

  push(leaf: Uint8Array): void {
    let node = { height: 0, digest: leaf }
    for (let top = this.#stack.at(-1); top && top.height === node.height; top = this.#stack.at(-1)) {
      this.#stack.pop()
      node = { height: node.height + 1, digest: this.#parent(top.digest, node.digest) }
    }
    this.#stack.push(node)
  }

  /**
   * The root of the tree padded on the right to a power-of-two number of leaves, `pad(h)` being
   * the root of an all-padding subtree of height h (BEP 52's zero leaves); undefined when no leaf
   * was pushed. The stack's heights fall from bottom to top, so the lowest subtree is padded up
   * to the height of the one below it, merged with it, and so on.
   */
  paddedRoot(pad: (height: number) => Uint8Array): Uint8Array | undefined {
    const top = this.#stack.pop()
    if (!top) return undefined
    let { height, digest } = top
    for (let next = this.#stack.at(-1); next; next = this.#stack.at(-1)) {
      if (next.height === height) {
        this.#stack.pop()
        digest = this.#parent(next.digest, digest)
      } else {
        digest = this.#parent(digest, pad(height))
      }
      height++
    }
    return digest
  }

  /** The root, a lone node moving up unchanged; undefined when no leaf was pushed. */
  root(): Uint8Array | undefined {
    let right = this.#stack.pop()?.digest
    for (let left = this.#stack.pop(); left && right; left = this.#stack.pop()) right = this.#parent(left.digest, right)
    return right
  }
}
