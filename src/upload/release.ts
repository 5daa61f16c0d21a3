/**
 * Freeing an upload's chunks as soon as they are hashed, rather than at the next collection.
 *
 * Node hands each piece of a request body to JS as a Buffer over memory malloc'd outside the JS
 * heap, 64 KiB or so per socket read. V8 frees that memory only when a collection finds the Buffer dead, and it starts one for that reason only after tens of MiB of
 * such memory have piled up: a 256 MiB upload ran several full collections of the whole heap,
 * whose cost grows with everything else the server holds, and the memory waited for them.
 * `ArrayBuffer.prototype.transfer(0)` (ES2024; V8 11.4, Node 21 and later) detaches the buffer and
 * frees its memory at once; the collections then have nothing to do for it.
 *
 * Only a buffer that is wholly one chunk of this request's body (offset 0, its whole length) can
 * be freed this way: it holds nothing but this request's bytes, which this upload alone reads. A
 * chunk that shares its buffer (Node's pool for small Buffers, 64 KiB on Node 24; a body chunk cut
 * from a larger read) is left to the collector. pump.ts frees each chunk of a body once its consumer
 * has it: the hashers for a raw body, the multipart reader (which copies whatever it keeps) for a
 * form.
 */

type Transferable = ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer }

/** Where the runtime has ArrayBuffer.prototype.transfer. */
export const canReleaseChunks = typeof (ArrayBuffer.prototype as Transferable).transfer === 'function'

/** The chunk is the whole of its ArrayBuffer, and holds something (a freed buffer reads as empty, and freeing it again would throw). */
function wholeBuffer(chunk: Uint8Array): chunk is Uint8Array<ArrayBuffer> {
  return chunk.byteLength > 0 && chunk.buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
}

/** Frees an ArrayBuffer's memory now: it reads as empty after. */
function release(buffer: ArrayBuffer): void {
  (buffer as Transferable).transfer?.(0)
}

/**
 * Frees a chunk's memory now if the chunk is the whole of its buffer (it reads as empty after);
 * call it once nothing will read the chunk again. A no-op where the runtime lacks
 * ArrayBuffer.prototype.transfer.
 */
export function releaseChunk(chunk: Uint8Array): void {
  if (canReleaseChunks && wholeBuffer(chunk)) release(chunk.buffer)
}
