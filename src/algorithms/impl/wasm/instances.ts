/**
 * The committed WebAssembly modules (Tiger, the similarity hashes) compiled once at load and
 * instantiated per hasher, each with its own memory, so hashers running side by side keep their
 * own state.
 */

/** The part of the WebAssembly JavaScript API used here (@types/node 20 does not declare it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object) => { exports: unknown }
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly

/** Compiles the module in `base64` once; each call of the result is a fresh instance's exports. */
export function wasmInstances<Exports>(base64: string): () => Exports {
  const module = new wasm.Module(Buffer.from(base64, 'base64'))
  return () => new wasm.Instance(module).exports as Exports
}
