/**
 * Freeing an upload's chunks as soon as they are hashed, rather than at the next collection.
 *
 * Node hands each piece of a request body to JS as a Buffer over memory malloc'd outside the JS
 * heap, 64 KiB or so per socket read (a copy made by the HTTP parser on Node 20, a slice of the
 * socket's read buffer on Node 24). V8 frees that memory only when a
 * collection finds the Buffer dead, and it starts one for that reason only after tens of MiB of
 * such memory have piled up: a 256 MiB upload ran several full collections of the whole heap,
 * whose cost grows with everything else the server holds, and the memory waited for them.
 * `ArrayBuffer.prototype.transfer(0)` (ES2024; V8 11.4, Node 21 and later) detaches the buffer and
 * frees its memory at once; the collections then have nothing to do for it.
 *
 * Only a buffer that is wholly one chunk of this request's body (offset 0, its whole length) can
 * be freed this way: it holds nothing but this request's bytes, which this upload alone reads. A
 * chunk that shares its buffer (Node 24's body chunks are slices of the socket's read buffer,
 * which may also hold the next pipelined request; Node's pool for small Buffers, 64 KiB on
 * Node 24) is left to the collector. Two cases:
 * - `own`: a raw request body's chunks, each once the sink has it.
 * - `parents`: the file part of a multipart body arrives as slices of the body's chunks, which
 *   busboy parses one after another (it cuts the part out with `subarray`). `ownBodyBuffers`
 *   records the body's chunks that are wholly their buffer, as busboy receives them. Once a slice
 *   of a later such buffer arrives, busboy has finished with the earlier one and every slice of it
 *   has been read, so the earlier one is freed. Slices of other buffers (busboy's look-behind
 *   buffer, say) are neither freed nor count as a later chunk.
 */

import type { Readable } from 'node:stream'

type Transferable = ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer }

/** Where the runtime has ArrayBuffer.prototype.transfer. */
export const canReleaseChunks = typeof (ArrayBuffer.prototype as Transferable).transfer === 'function'

export type ReleaseMode = { kind: 'own' } | { kind: 'parents', of: WeakSet<ArrayBuffer> }

/** The chunk is the whole of its ArrayBuffer. */
function wholeBuffer(chunk: Uint8Array): chunk is Uint8Array<ArrayBuffer> {
  return chunk.buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
}

/**
 * The ArrayBuffers that are each wholly one chunk of `body`, recorded as its reader (busboy's
 * pipe) receives them. The recording listener is added when that reader's is: a 'data' listener
 * added before would start the body flowing with nobody else to read it.
 */
export function ownBodyBuffers(body: Readable): WeakSet<ArrayBuffer> {
  const own = new WeakSet<ArrayBuffer>()
  if (!canReleaseChunks) return own
  const record = (chunk: unknown): void => {
    if (chunk instanceof Uint8Array && wholeBuffer(chunk)) own.add(chunk.buffer)
  }
  const onNewListener = (event: string | symbol): void => {
    if (event !== 'data') return
    body.off('newListener', onNewListener)
    body.on('data', record)
  }
  body.on('newListener', onNewListener)
  return own
}

/** Frees an ArrayBuffer's memory now: it reads as empty after. */
function release(buffer: ArrayBuffer): void {
  (buffer as Transferable).transfer?.(0)
}

/**
 * What an upload's source frees, chunk by chunk: call `afterWrite` with each chunk once the sink
 * has it (the sink's contract: it hashed or copied the chunk). A no-op where the runtime lacks
 * ArrayBuffer.prototype.transfer.
 */
export function chunkReleaser(mode: ReleaseMode): (chunk: Uint8Array) => void {
  if (!canReleaseChunks) return () => {}
  if (mode.kind === 'own') {
    return (chunk) => { if (wholeBuffer(chunk)) release(chunk.buffer) }
  }
  const own = mode.of
  let parent: ArrayBuffer | null = null
  return (chunk) => {
    const buffer = chunk.buffer
    if (buffer === parent || !(buffer instanceof ArrayBuffer) || !own.has(buffer)) return
    if (parent !== null) release(parent)
    parent = buffer
  }
}
