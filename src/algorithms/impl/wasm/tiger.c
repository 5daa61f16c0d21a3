/*
 * Tiger/192 (R. Anderson and E. Biham, "Tiger: A Fast New Hash Function", FSE 1996), Tiger2, and
 * the Tiger Tree Hash (THEX: J. Chapweske and G. Mohr, "Tree Hash EXchange format", 2003, with
 * 1,024-byte leaves, as DC++ and RHash's tth.c), compiled to WebAssembly by
 * scripts/build-tiger-wasm.sh. No libc: freestanding C. An instance serves one hasher at a time,
 * so the state is plain globals in the instance's own memory.
 *
 * The JavaScript side copies input into `tiger_input()` (at most TIGER_INPUT_BYTES a call) and
 * calls `tiger_update` or `tth_update` with its length, so a 64 KiB chunk is one call, and reads
 * the 24-byte result at `tiger_output()`. The S-boxes are not transcribed: `tiger_generate_sboxes`
 * builds them by the paper's procedure (its "sboxes.c"), and an instance may instead be handed the
 * 8 KiB a previous instance built, at `tiger_sboxes()`.
 *
 * Words are read and written little-endian, which is WebAssembly's byte order, as the reference
 * implementation's byte output, RHash and the TTH tools write them.
 */
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define EXPORT(name) __attribute__((export_name(#name)))
#define TIGER_INPUT_BYTES 65536
#define TTH_LEAF_BYTES 1024
#define DIGEST_BYTES 24
/* A leaf count is a u64, so the tree has at most 64 levels below the root. */
#define TTH_MAX_LEVELS 64

/*
 * Memory (two pages, fixed; scripts/build-tiger-wasm.sh links the C data at 81,920 and up, so the
 * two regions below are this file's alone). The S-boxes sit at a constant address so that every
 * lookup is one load with the table's address folded into the instruction's offset.
 *
 *        4,096 ..  12,287   S-boxes, 4 × 256 64-bit words
 *       16,384 ..  81,919   input, TIGER_INPUT_BYTES
 *       81,920 .. 131,071   C data (the output, the tree, a partial leaf) and an 8 KiB stack
 */
#define sboxes ((u64 *)4096)
#define T1 (sboxes)
#define T2 (sboxes + 256)
#define T3 (sboxes + 512)
#define T4 (sboxes + 768)

#define input ((u8 *)16384)
static u8 output[DIGEST_BYTES];

static inline u64 load64(const u8 *p) {
  u64 word;
  __builtin_memcpy(&word, p, 8);
  return word;
}

static inline void store64(u8 *p, u64 word) {
  __builtin_memcpy(p, &word, 8);
}

/*
 * One round. The bytes of c are taken from its two 32-bit halves, which V8 turns into fewer
 * instructions than shifts of the 64-bit word.
 */
#define ROUND(a, b, c, x, mul) \
  c ^= x; \
  { \
    u32 lo = (u32)c, hi = (u32)(c >> 32); \
    a -= T1[lo & 255] ^ T2[(lo >> 16) & 255] ^ T3[hi & 255] ^ T4[(hi >> 16) & 255]; \
    b += T4[(lo >> 8) & 255] ^ T3[lo >> 24] ^ T2[(hi >> 8) & 255] ^ T1[hi >> 24]; \
  } \
  b *= mul;

#define PASS(a, b, c, mul) \
  ROUND(a, b, c, x0, mul) ROUND(b, c, a, x1, mul) ROUND(c, a, b, x2, mul) ROUND(a, b, c, x3, mul) \
  ROUND(b, c, a, x4, mul) ROUND(c, a, b, x5, mul) ROUND(a, b, c, x6, mul) ROUND(b, c, a, x7, mul)

#define KEY_SCHEDULE \
  x0 -= x7 ^ 0xA5A5A5A5A5A5A5A5ULL; x1 ^= x0; x2 += x1; x3 -= x2 ^ ((~x1) << 19); \
  x4 ^= x3; x5 += x4; x6 -= x5 ^ ((~x4) >> 23); x7 ^= x6; \
  x0 += x7; x1 -= x0 ^ ((~x7) << 19); x2 ^= x1; x3 += x2; \
  x4 -= x3 ^ ((~x2) >> 23); x5 ^= x4; x6 += x5; x7 -= x6 ^ 0x0123456789ABCDEFULL;

/* The compression function: `state` (a, b, c) and one 64-byte block at any alignment. */
static inline void compress(u64 state[3], const u8 *block) {
  u64 x0 = load64(block), x1 = load64(block + 8), x2 = load64(block + 16), x3 = load64(block + 24);
  u64 x4 = load64(block + 32), x5 = load64(block + 40), x6 = load64(block + 48), x7 = load64(block + 56);
  u64 a = state[0], b = state[1], c = state[2];
  PASS(a, b, c, 5)
  KEY_SCHEDULE
  PASS(c, a, b, 7)
  KEY_SCHEDULE
  PASS(b, c, a, 9)
  /* Feed-forward. */
  state[0] = a ^ state[0];
  state[1] = b - state[1];
  state[2] = c + state[2];
}

#define ROUND2(a, b, c, x, mul) ROUND(a, b, c, x, mul) ROUND(a##_, b##_, c##_, x##_, mul)
#define PASS2(a, b, c, mul) \
  ROUND2(a, b, c, x0, mul) ROUND2(b, c, a, x1, mul) ROUND2(c, a, b, x2, mul) ROUND2(a, b, c, x3, mul) \
  ROUND2(b, c, a, x4, mul) ROUND2(c, a, b, x5, mul) ROUND2(a, b, c, x6, mul) ROUND2(b, c, a, x7, mul)
#define KEY_SCHEDULE2 \
  { KEY_SCHEDULE } \
  { u64 x0 = x0_, x1 = x1_, x2 = x2_, x3 = x3_, x4 = x4_, x5 = x5_, x6 = x6_, x7 = x7_; KEY_SCHEDULE \
    x0_ = x0; x1_ = x1; x2_ = x2; x3_ = x3; x4_ = x4; x5_ = x5; x6_ = x6; x7_ = x7; }

/*
 * Two independent compressions at once. Tiger is one long chain of dependent lookups; a second
 * chain beside it fills the first one's waits (some 20 % faster in V8 than one leaf at a time).
 */
static void compress2(u64 s[3], const u8 *block, u64 s_[3], const u8 *block_) {
  u64 x0 = load64(block), x1 = load64(block + 8), x2 = load64(block + 16), x3 = load64(block + 24);
  u64 x4 = load64(block + 32), x5 = load64(block + 40), x6 = load64(block + 48), x7 = load64(block + 56);
  u64 x0_ = load64(block_), x1_ = load64(block_ + 8), x2_ = load64(block_ + 16), x3_ = load64(block_ + 24);
  u64 x4_ = load64(block_ + 32), x5_ = load64(block_ + 40), x6_ = load64(block_ + 48), x7_ = load64(block_ + 56);
  u64 a = s[0], b = s[1], c = s[2];
  u64 a_ = s_[0], b_ = s_[1], c_ = s_[2];
  PASS2(a, b, c, 5)
  KEY_SCHEDULE2
  PASS2(c, a, b, 7)
  KEY_SCHEDULE2
  PASS2(b, c, a, 9)
  s[0] = a ^ s[0]; s[1] = b - s[1]; s[2] = c + s[2];
  s_[0] = a_ ^ s_[0]; s_[1] = b_ - s_[1]; s_[2] = c_ + s_[2];
}

static inline void initial_state(u64 state[3]) {
  state[0] = 0x0123456789ABCDEFULL;
  state[1] = 0xFEDCBA9876543210ULL;
  state[2] = 0xF096A5B4C3B2E187ULL;
}

/*
 * The last block of a message whose `tail_bytes` (< 64) unprocessed bytes sit at `tail`: the pad
 * byte (0x01 for Tiger, 0x80 for Tiger2), zeros, and the length in bits, 64-bit little-endian.
 */
static void finish(u64 state[3], const u8 *tail, u32 tail_bytes, u64 total_bytes, u8 pad) {
  u8 block[64];
  __builtin_memset(block, 0, 64);
  __builtin_memcpy(block, tail, tail_bytes);
  block[tail_bytes] = pad;
  if (tail_bytes + 1 > 56) {
    compress(state, block);
    __builtin_memset(block, 0, 64);
  }
  store64(block + 56, total_bytes << 3);
  compress(state, block);
}

static void write_digest(u8 *out, const u64 state[3]) {
  store64(out, state[0]);
  store64(out + 8, state[1]);
  store64(out + 16, state[2]);
}

/* The paper's S-box generation: five passes of byte swaps driven by the compression function. */
EXPORT(tiger_generate_sboxes) void tiger_generate_sboxes(void) {
  static const char seed[64] = "Tiger - A Fast New Hash Function, by Ross Anderson and Eli Biham";
  u8 *bytes = (u8 *)sboxes;
  for (u32 i = 0; i < 1024; i++)
    for (u32 column = 0; column < 8; column++) bytes[8 * i + column] = (u8)i;
  u64 state[3];
  initial_state(state);
  u32 abc = 2;
  for (u32 generation = 0; generation < 5; generation++) {
    for (u32 i = 0; i < 256; i++) {
      for (u32 box = 0; box < 1024; box += 256) {
        if (++abc == 3) {
          abc = 0;
          compress(state, (const u8 *)seed);
        }
        for (u32 column = 0; column < 8; column++) {
          u32 other = box + (u8)(state[abc] >> (8 * column));
          u8 swap = bytes[8 * (box + i) + column];
          bytes[8 * (box + i) + column] = bytes[8 * other + column];
          bytes[8 * other + column] = swap;
        }
      }
    }
  }
}

EXPORT(tiger_sboxes) u8 *tiger_sboxes(void) { return (u8 *)sboxes; }
EXPORT(tiger_input) u8 *tiger_input(void) { return input; }
EXPORT(tiger_output) u8 *tiger_output(void) { return output; }

/* ---- Tiger and Tiger2: one streaming digest per instance. ---- */

static u64 digest_state[3];
static u8 digest_pending[64];
static u32 digest_pending_bytes;
static u64 digest_total_bytes;
static u8 digest_pad;

/* Starts a digest; `pad` is 0x01 for Tiger, 0x80 for Tiger2. */
EXPORT(tiger_begin) void tiger_begin(u32 pad) {
  initial_state(digest_state);
  digest_pending_bytes = 0;
  digest_total_bytes = 0;
  digest_pad = (u8)pad;
}

/* Hashes `length` bytes at `tiger_input()`. */
EXPORT(tiger_update) void tiger_update(u32 length) {
  const u8 *data = input;
  digest_total_bytes += length;
  if (digest_pending_bytes > 0) {
    u32 take = 64 - digest_pending_bytes;
    if (take > length) take = length;
    __builtin_memcpy(digest_pending + digest_pending_bytes, data, take);
    digest_pending_bytes += take;
    data += take;
    length -= take;
    if (digest_pending_bytes < 64) return;
    compress(digest_state, digest_pending);
    digest_pending_bytes = 0;
  }
  for (; length >= 64; data += 64, length -= 64) compress(digest_state, data);
  __builtin_memcpy(digest_pending, data, length);
  digest_pending_bytes = length;
}

/* Finishes the digest into `tiger_output()`. */
EXPORT(tiger_end) void tiger_end(void) {
  finish(digest_state, digest_pending, digest_pending_bytes, digest_total_bytes, digest_pad);
  write_digest(output, digest_state);
}

/* ---- The Tiger Tree Hash. ---- */

/* levels[i] holds the root of a complete subtree of 2^i leaves when bit i of `leaves` is set. */
static u8 levels[TTH_MAX_LEVELS][DIGEST_BYTES];
static u64 leaves;
static u8 partial_leaf[TTH_LEAF_BYTES];
static u32 partial_bytes;

/* An inner node: Tiger(0x01 ‖ left ‖ right), 49 bytes, so one block. */
static void node_hash(u8 out[DIGEST_BYTES], const u8 *left, const u8 *right) {
  u8 block[64];
  __builtin_memset(block, 0, 64);
  block[0] = 0x01;
  __builtin_memcpy(block + 1, left, DIGEST_BYTES);
  __builtin_memcpy(block + 1 + DIGEST_BYTES, right, DIGEST_BYTES);
  block[1 + 2 * DIGEST_BYTES] = 0x01;
  store64(block + 56, (u64)(1 + 2 * DIGEST_BYTES) << 3);
  u64 state[3];
  initial_state(state);
  compress(state, block);
  write_digest(out, state);
}

/* Adds a leaf's hash to the tree, merging the complete subtrees of equal height it completes. */
static void push_leaf(const u8 digest[DIGEST_BYTES]) {
  u8 node[DIGEST_BYTES];
  __builtin_memcpy(node, digest, DIGEST_BYTES);
  u32 level = 0;
  for (u64 count = leaves; count & 1; count >>= 1, level++) node_hash(node, levels[level], node);
  __builtin_memcpy(levels[level], node, DIGEST_BYTES);
  leaves++;
}

/*
 * A leaf: Tiger(0x00 ‖ data), `length` ≤ 1,024 bytes. The prefix puts the data one byte off the
 * block boundary, so the first block is assembled here and the rest is read in place, unaligned.
 */
static void leaf_hash(const u8 *data, u32 length) {
  u8 block[64];
  u64 state[3];
  initial_state(state);
  const u8 *tail = data;
  u32 tail_bytes;
  if (length >= 63) {
    block[0] = 0x00;
    __builtin_memcpy(block + 1, data, 63);
    compress(state, block);
    const u8 *p = data + 63;
    u32 rest = length - 63;
    for (; rest >= 64; p += 64, rest -= 64) compress(state, p);
    tail = p;
    tail_bytes = rest;
  } else {
    block[0] = 0x00;
    __builtin_memcpy(block + 1, data, length);
    tail = block;
    tail_bytes = length + 1;
  }
  finish(state, tail, tail_bytes, (u64)length + 1, 0x01);
  u8 digest[DIGEST_BYTES];
  write_digest(digest, state);
  push_leaf(digest);
}

/* Two whole leaves side by side (compress2), pushed in order. */
static void leaf_hash2(const u8 *data, const u8 *data_) {
  u8 block[64], block_[64];
  u64 s[3], s_[3];
  initial_state(s);
  initial_state(s_);
  block[0] = 0x00;
  block_[0] = 0x00;
  __builtin_memcpy(block + 1, data, 63);
  __builtin_memcpy(block_ + 1, data_, 63);
  compress2(s, block, s_, block_);
  for (u32 offset = 63; offset + 64 <= TTH_LEAF_BYTES; offset += 64) compress2(s, data + offset, s_, data_ + offset);
  __builtin_memset(block, 0, 64);
  __builtin_memset(block_, 0, 64);
  block[0] = data[TTH_LEAF_BYTES - 1];
  block_[0] = data_[TTH_LEAF_BYTES - 1];
  block[1] = 0x01;
  block_[1] = 0x01;
  store64(block + 56, (u64)(TTH_LEAF_BYTES + 1) << 3);
  store64(block_ + 56, (u64)(TTH_LEAF_BYTES + 1) << 3);
  compress2(s, block, s_, block_);
  u8 digest[DIGEST_BYTES];
  write_digest(digest, s);
  push_leaf(digest);
  write_digest(digest, s_);
  push_leaf(digest);
}

EXPORT(tth_begin) void tth_begin(void) {
  leaves = 0;
  partial_bytes = 0;
}

/* Hashes `length` bytes at `tiger_input()`: whole leaves in place, a partial one kept. */
EXPORT(tth_update) void tth_update(u32 length) {
  const u8 *data = input;
  if (partial_bytes > 0) {
    u32 take = TTH_LEAF_BYTES - partial_bytes;
    if (take > length) take = length;
    __builtin_memcpy(partial_leaf + partial_bytes, data, take);
    partial_bytes += take;
    data += take;
    length -= take;
    if (partial_bytes < TTH_LEAF_BYTES) return;
    leaf_hash(partial_leaf, TTH_LEAF_BYTES);
    partial_bytes = 0;
  }
  for (; length >= 2 * TTH_LEAF_BYTES; data += 2 * TTH_LEAF_BYTES, length -= 2 * TTH_LEAF_BYTES) leaf_hash2(data, data + TTH_LEAF_BYTES);
  for (; length >= TTH_LEAF_BYTES; data += TTH_LEAF_BYTES, length -= TTH_LEAF_BYTES) leaf_hash(data, TTH_LEAF_BYTES);
  __builtin_memcpy(partial_leaf, data, length);
  partial_bytes = length;
}

/*
 * Finishes the tree into `tiger_output()`. The tail is a leaf, and so is the empty leaf of an
 * empty file. The subtrees are folded from the smallest up, which promotes a node without a
 * sibling unchanged (THEX §2.1).
 */
EXPORT(tth_end) void tth_end(void) {
  if (partial_bytes > 0 || leaves == 0) leaf_hash(partial_leaf, partial_bytes);
  u32 level = 0;
  while (!((leaves >> level) & 1)) level++;
  u8 root[DIGEST_BYTES];
  __builtin_memcpy(root, levels[level], DIGEST_BYTES);
  for (level++; level < TTH_MAX_LEVELS; level++)
    if ((leaves >> level) & 1) node_hash(root, levels[level], root);
  __builtin_memcpy(output, root, DIGEST_BYTES);
}
