/**
 * Positioned reads that never wait for the disk: preadv2(2) with RWF_NOWAIT (Linux 4.14 and
 * later), reached through koffi as libxcrypt and mallopt(3) are. The kernel copies the bytes if
 * the page cache holds them all and returns at once; if it would have to read the disk (or wait
 * for a lock), it starts the readahead, does not wait for it, and fails with EAGAIN. (A disk fast
 * enough to finish that readahead within the call, as a virtual disk backed by the host's cache
 * can be, turns a miss into a read that succeeds: never one that waits.)
 *
 * The breached-password store (store.ts) reads a prefix's records with it on the event loop, and
 * sends only the reads that would wait to libuv's thread pool. A read through the pool is a
 * hand-off to a pool thread and back for every request: with the server on one core, two context
 * switches and a wake-up per /range answer, the largest cost of a /range answer beside the HTTP
 * itself (bench/pwned.ts, the /range row, compares hashd with a server answering from memory). A
 * store of two billion hashes is 40 GB, mostly not cached: those reads still go to the pool, so
 * the event loop is never held by the disk.
 *
 * Where it is not available (not Linux, a C library without preadv2, koffi not loadable, a kernel
 * that refuses the flag) `pageCacheReader` is null or turns itself off, and every read goes
 * through the pool as before.
 */
import { createRequire } from 'node:module'
import { endianness } from 'node:os'

/** Reads `target.length` bytes at `position` from the page cache: the count read (0 … length), or -1 when that would wait (or failed). */
export type PageCacheRead = (fd: number, target: Uint8Array, position: number) => number

/**
 * The largest read it makes: a prefix's records when the store's index is in memory (store.ts
 * CompactIndex keeps their lengths in 16 bits). Longer reads go to the pool.
 */
export const PAGE_CACHE_READ_MAX_BYTES = 65536

/** <linux/fs.h>: per-call flag of preadv2, "do not wait for data which is not immediately available". */
const RWF_NOWAIT = 0x8
/** <errno.h> on Linux: a kernel or C library that cannot take the call or the flag (ENOSYS, EINVAL, EOPNOTSUPP). */
const UNSUPPORTED = new Set([38, 22, 95])

let reader: PageCacheRead | null | undefined

/** The reader, loaded on first use; null where preadv2 cannot be called. */
export function pageCacheReader(): PageCacheRead | null {
  if (reader === undefined) reader = loadReader()
  return reader
}

type Preadv2 = (fd: number, iov: Uint8Array, count: number, offset: number, flags: number) => number | bigint

function loadReader(): PageCacheRead | null {
  // The iovec below is written as two little-endian 64-bit words.
  if (process.platform !== 'linux' || endianness() !== 'LE' || !['x64', 'arm64'].includes(process.arch)) return null
  let koffi: typeof import('koffi')
  let preadv2: Preadv2
  try {
    koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi')
    preadv2 = koffi.load('libc.so.6').func('intptr_t preadv2(int fd, void *iov, int iovcnt, int64_t offset, int flags)') as Preadv2
  } catch {
    return null
  }
  // The kernel copies into memory of koffi's, made once, which JavaScript sees without a copy; one
  // struct iovec {base, length} points at it. A Buffer passed as the iovec is handed over as a
  // pointer, where an iovec given as an object would be marshalled anew on every call.
  const scratch = koffi.alloc('uint8_t', PAGE_CACHE_READ_MAX_BYTES)
  const landed = new Uint8Array(koffi.view(scratch, PAGE_CACHE_READ_MAX_BYTES))
  const iovec = Buffer.alloc(16)
  iovec.writeBigUInt64LE(BigInt(koffi.address(scratch)), 0)
  let usable = true
  return (fd, target, position) => {
    if (!usable || target.length > PAGE_CACHE_READ_MAX_BYTES) return -1
    // iov_len: the high 32 bits stay 0.
    iovec.writeUInt32LE(target.length, 8)
    const got = Number(preadv2(fd, iovec, 1, position, RWF_NOWAIT))
    if (got < 0) {
      // Not cached (EAGAIN), or failed: the pool reads it, and reports a real error of the file.
      // A kernel that does not know the call or the flag turns this off for good.
      if (UNSUPPORTED.has(koffi.errno())) usable = false
      return -1
    }
    target.set(landed.subarray(0, got))
    return got
  }
}
