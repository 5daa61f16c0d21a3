/*
 * The per-byte work of ssdeep and TLSH, compiled to WebAssembly (with SIMD) by
 * scripts/build-similarity-wasm.sh and wrapped by src/similarity/fast.ts. The same algorithms as
 * src/similarity/ssdeep.ts and tlsh.ts (which stay as the readable versions, and which the tests
 * hold this one equal to in any chunking); written from those, not from the reference sources.
 * No libc: freestanding C. An instance serves one hasher at a time, so the state is plain globals
 * in the instance's own memory.
 *
 * The JavaScript side copies input into `sim_input()` (at most SIM_INPUT_BYTES a call) and calls
 * `ssdeep_update` or `tlsh_update` with its length. The 8 bytes before `sim_input()` hold the last
 * bytes of the previous call, so both rolling windows read the input in place at negative offsets.
 *
 * ssdeep: every block size still in play keeps a 6-bit FNV piece hash. The low 6 bits of a product
 * depend only on the low 6 bits of its factors, so each is kept in a 16-bit lane and updated as
 * `h * 0x93 ^ c` without masking: 8 block sizes per i16x8 multiply. Lanes 0–30 are the 31 block
 * sizes, lane 31 the piece hash kept for the 32nd (ssdeep.ts's `lastH`); lanes out of play compute
 * values nobody reads, and each is set before it comes into play.
 *
 * TLSH: the Pearson hash of a triplet is T[T[T[salt ^ b0] ^ bx] ^ by]. Its first two steps depend
 * on two bytes only, so they come from tables of 65,536 entries built once per instance from the
 * permutation the JavaScript side writes at `tlsh_table()`: one load gives the first two steps of
 * the three triplets that start (b0, b1) and of the checksum, one those of (b0, b2), one (b0, b3).
 */
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;
typedef u16 v8u16 __attribute__((vector_size(16)));

#define EXPORT(name) __attribute__((export_name(#name)))
#define SIM_INPUT_BYTES 65536
#define HISTORY_BYTES 8

/*
 * Memory (twelve pages, fixed; scripts/build-similarity-wasm.sh links the C data at 655,360 and
 * up, so the regions below are this file's alone). The tables sit at constant addresses so that
 * every lookup is one load with the table's address folded into the instruction's offset.
 *
 *        1,024 ..   1,279   TLSH's Pearson permutation
 *        2,048 ..   3,071   TLSH's 256 bucket counts
 *       65,536 .. 327,679   pairs01 (u32)
 *      327,680 .. 458,751   pairs02 (u16)
 *      458,752 .. 524,287   pairs03 (u8)
 *      524,288 .. 589,831   the last 8 bytes of the previous call, then the input
 *      655,360 .. 786,431   C data (ssdeep's state, the output) and an 8 KiB stack
 */
#define pearson ((u8 *)1024)
#define buckets ((u32 *)2048)
#define pairs01 ((u32 *)65536)
#define pairs02 ((u16 *)327680)
#define pairs03 ((u8 *)458752)
#define input ((u8 *)(524288 + HISTORY_BYTES))
static u8 output[128];

EXPORT(sim_input) u8 *sim_input(void) { return input; }
EXPORT(sim_output) u8 *sim_output(void) { return output; }

/* Keeps the last HISTORY_BYTES bytes seen where the next call reads them (input[-8 .. -1]). */
static void keep_history(u32 length) {
  __builtin_memmove(input - HISTORY_BYTES, input + length - HISTORY_BYTES, HISTORY_BYTES);
}

/* ---------------------------------------------------------------- ssdeep */

#define ROLLING_WINDOW 7
#define MIN_BLOCKSIZE 3
#define HASH_INIT 0x27
#define NUM_BLOCKHASHES 31
#define SPAMSUM_LENGTH 64
#define HALF_LENGTH (SPAMSUM_LENGTH / 2)
/* The low 6 bits of FNV's prime 0x01000193 (all that matters for a 6-bit hash). */
#define FNV_PRIME_LOW 0x93
#define LAST_LANE 31

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct {
  u64 total;
  u64 reduce_border;
  u32 start, end, half_end, roll_mask;
  /* Whether lane 31 (the 32nd block size's piece hash) is in play. */
  u32 last_on;
  u32 h1, h2, h3;
  u32 length[NUM_BLOCKHASHES];
  u8 half_digest[NUM_BLOCKHASHES];
  u8 digest[NUM_BLOCKHASHES][SPAMSUM_LENGTH];
  u16 piece[32] __attribute__((aligned(16)));
  u16 half[32] __attribute__((aligned(16)));
} s;

EXPORT(ssdeep_begin) void ssdeep_begin(void) {
  __builtin_memset(&s, 0, sizeof s);
  s.reduce_border = MIN_BLOCKSIZE * SPAMSUM_LENGTH;
  s.end = 1;
  for (u32 i = 0; i < 32; i++) s.piece[i] = s.half[i] = HASH_INIT;
  __builtin_memset(input - HISTORY_BYTES, 0, HISTORY_BYTES);
}

/* The input's size so far, set by the caller before the pieces of one update (as ssdeep.ts counts it). */
EXPORT(ssdeep_size) void ssdeep_size(double total) { s.total = (u64)total; }

static void fork_next(void) {
  if (s.end < NUM_BLOCKHASHES) {
    /* The new block size has no characters yet: its piece hash runs on from the last one's. */
    s.piece[s.end] = s.piece[s.end - 1];
    s.end++;
  } else if (!s.last_on) {
    s.last_on = 1;
    s.piece[LAST_LANE] = s.piece[NUM_BLOCKHASHES - 1];
  }
}

static void try_reduce(void) {
  if (s.end - s.start < 2) return;
  if (s.reduce_border >= s.total) return;
  if (s.length[s.start + 1] < HALF_LENGTH) return;
  s.start++;
  s.reduce_border *= 2;
  s.roll_mask = s.roll_mask * 2 + 1;
}

/* A trigger point: each block size it reaches ends a piece and adds a character (ssdeep.ts's trigger). */
static void trigger(u32 rolled) {
  u32 h = rolled >> s.start;
  for (u32 i = s.start; i < s.end; i++) {
    if (s.length[i] == 0) fork_next();
    u32 half_kept = s.length[i] >= HALF_LENGTH;
    s.digest[i][s.length[i]] = (u8)B64[s.piece[i] & 63];
    s.half_digest[i] = (u8)B64[(half_kept ? s.half[i] : s.piece[i]) & 63];
    if (s.length[i] < SPAMSUM_LENGTH - 1) {
      if (!half_kept) s.half[i] = s.piece[i];
      s.length[i]++;
      s.piece[i] = HASH_INIT;
      if (s.length[i] < HALF_LENGTH) {
        s.half[i] = HASH_INIT;
        s.half_digest[i] = 0;
      }
    } else {
      try_reduce();
    }
    if (h & 1) break;
    h >>= 1;
  }
  u32 half_end = s.start;
  for (u32 i = s.start; i < s.end; i++) if (s.length[i] >= HALF_LENGTH) half_end = i + 1;
  s.half_end = half_end;
}

/*
 * The piece hashes as four vectors of 8 lanes, and the half hashes likewise. Lanes in play are
 * [start, end), lane 31 once last_on, and half lanes [start, half_end). Usually they all sit in two
 * neighbouring vectors (8 lanes from start span most of what is in play), so the loop updates those
 * two of each kind; otherwise (inputs that trigger at many block sizes at once) all eight. Either
 * way every vector it updates is updated for every byte, with no per-lane condition.
 */
static v8u16 pieces[4], halves[4];

/* The first of the two vectors that hold every lane in play, or -1 if two do not. */
static int window_of_two(void) {
  u32 first = s.start >> 3;
  if (first > 2) first = 2;
  u32 last = s.last_on ? LAST_LANE : s.end - 1;
  if (s.half_end > s.start && s.half_end - 1 > last) last = s.half_end - 1;
  return last >> 3 <= first + 1 ? (int)first : -1;
}

/*
 * Whether the rolling hash's value ends a piece: 3 divides horg and the quotient's bits under
 * roll_mask are 0; libfuzzy skips horg == 0 (the sum 0xffffffff is not -1 (mod 3) once 1 is
 * added in 32 bits). For a multiple of 3, horg times 3's inverse mod 2^32 is the quotient, and for
 * no other horg is that product at most 0x55555555. The tests are combined without branches: a
 * third of all bytes pass the first, so a branch on it alone would mispredict often.
 */
static inline u32 no_trigger(u32 horg, u32 roll_mask) {
  u32 rolled = horg * 0xAAAAAAABu;
  u32 not_multiple = (u32)(((u64)0x55555555u - rolled) >> 63);
  return (rolled & roll_mask) | not_multiple | (horg == 0);
}

#define ROLL() \
  u32 c = in[k]; \
  h2 = h2 - h1 + ROLLING_WINDOW * c; \
  h1 = h1 + c - in[(int)k - ROLLING_WINDOW]; \
  h3 = (h3 << 5) ^ c; \
  v8u16 cv = (v8u16){0} + (u16)c

#define STEP(v) v = v * FNV_PRIME_LOW ^ cv

EXPORT(ssdeep_update) void ssdeep_update(u32 length) {
  const u8 *in = input;
  u32 h1 = s.h1, h2 = s.h2, h3 = s.h3;
  __builtin_memcpy(pieces, s.piece, sizeof pieces);
  __builtin_memcpy(halves, s.half, sizeof halves);
  u32 k = 0;
  while (k < length) {
    u32 roll_mask = s.roll_mask;
    int first = window_of_two();
    u32 rolled_at = length;
    if (first >= 0) {
      v8u16 p0 = pieces[first], p1 = pieces[first + 1], q0 = halves[first], q1 = halves[first + 1];
      for (; k < length; k++) {
        ROLL();
        STEP(p0); STEP(p1); STEP(q0); STEP(q1);
        if (no_trigger(h1 + h2 + h3 + 1, roll_mask)) continue;
        rolled_at = k++;
        break;
      }
      pieces[first] = p0; pieces[first + 1] = p1; halves[first] = q0; halves[first + 1] = q1;
    } else {
      v8u16 p0 = pieces[0], p1 = pieces[1], p2 = pieces[2], p3 = pieces[3];
      v8u16 q0 = halves[0], q1 = halves[1], q2 = halves[2], q3 = halves[3];
      for (; k < length; k++) {
        ROLL();
        STEP(p0); STEP(p1); STEP(p2); STEP(p3);
        STEP(q0); STEP(q1); STEP(q2); STEP(q3);
        if (no_trigger(h1 + h2 + h3 + 1, roll_mask)) continue;
        rolled_at = k++;
        break;
      }
      pieces[0] = p0; pieces[1] = p1; pieces[2] = p2; pieces[3] = p3;
      halves[0] = q0; halves[1] = q1; halves[2] = q2; halves[3] = q3;
    }
    if (rolled_at == length) break;
    __builtin_memcpy(s.piece, pieces, sizeof pieces);
    __builtin_memcpy(s.half, halves, sizeof halves);
    trigger((h1 + h2 + h3 + 1) * 0xAAAAAAABu);
    __builtin_memcpy(pieces, s.piece, sizeof pieces);
    __builtin_memcpy(halves, s.half, sizeof halves);
  }
  __builtin_memcpy(s.piece, pieces, sizeof pieces);
  __builtin_memcpy(s.half, halves, sizeof halves);
  s.h1 = h1;
  s.h2 = h2;
  s.h3 = h3;
  keep_history(length);
}

static u8 *put_decimal(u8 *out, u64 value) {
  u8 digits[24];
  u32 n = 0;
  do {
    digits[n++] = (u8)('0' + value % 10);
    value /= 10;
  } while (value);
  while (n) *out++ = digits[--n];
  return out;
}

/* Writes `blocksize:hash1:hash2` at sim_output() and returns its length (ssdeep.ts's digest). */
EXPORT(ssdeep_digest) u32 ssdeep_digest(void) {
  u32 h = s.h1 + s.h2 + s.h3;
  u32 bi = s.start;
  while (((u64)MIN_BLOCKSIZE << bi) * SPAMSUM_LENGTH < s.total) bi++;
  if (bi >= s.end) bi = s.end - 1;
  while (bi > s.start && s.length[bi] < HALF_LENGTH) bi--;

  u8 *out = put_decimal(output, (u64)MIN_BLOCKSIZE << bi);
  *out++ = ':';
  for (u32 i = 0; i < s.length[bi]; i++) *out++ = s.digest[bi][i];
  /* The piece still open adds a last character (none when the rolling hash is 0, libfuzzy's rule). */
  u8 last1 = h != 0 ? (u8)B64[s.piece[bi] & 63] : s.digest[bi][s.length[bi]];
  if (last1) *out++ = last1;
  *out++ = ':';
  if (bi < s.end - 1) {
    u32 j = bi + 1;
    u32 kept = s.length[j] < HALF_LENGTH - 1 ? s.length[j] : HALF_LENGTH - 1;
    for (u32 i = 0; i < kept; i++) *out++ = s.digest[j][i];
    u16 half_h = s.length[j] >= HALF_LENGTH ? s.half[j] : s.piece[j];
    u8 last2 = h != 0 ? (u8)B64[half_h & 63] : s.half_digest[j];
    if (last2) *out++ = last2;
  } else if (h != 0) {
    *out++ = (u8)B64[(bi == 0 ? s.piece[bi] : s.piece[LAST_LANE]) & 63];
  }
  return (u32)(out - output);
}

/* ---------------------------------------------------------------- TLSH */

#define TLSH_WINDOW 5
#define TLSH_BUCKETS 256

/*
 * pairs01: two Pearson steps of (b0, b1) for the salts 49, 12 and 84 and the checksum's 1, a byte
 * each; pairs02: of (b0, b2) for the salts 178 and 166; pairs03: of (b0, b3) for the salt 230.
 */
static u32 tlsh_tables_built;

static u32 checksum;
static u64 seen;

EXPORT(tlsh_table) u8 *tlsh_table(void) { return pearson; }
EXPORT(tlsh_buckets) u32 *tlsh_buckets(void) { return buckets; }
EXPORT(tlsh_checksum) u32 tlsh_checksum(void) { return checksum; }

static inline u32 two_steps(u32 salt, u32 x, u32 y) { return pearson[pearson[salt ^ x] ^ y]; }

/* Builds the pair tables from the permutation at tlsh_table(), which the caller wrote first. */
static void build_tables(void) {
  for (u32 x = 0; x < 256; x++) {
    for (u32 y = 0; y < 256; y++) {
      u32 at = x << 8 | y;
      pairs01[at] = two_steps(49, x, y) | two_steps(12, x, y) << 8 | two_steps(84, x, y) << 16 | two_steps(1, x, y) << 24;
      pairs02[at] = (u16)(two_steps(178, x, y) | two_steps(166, x, y) << 8);
      pairs03[at] = (u8)two_steps(230, x, y);
    }
  }
  tlsh_tables_built = 1;
}

EXPORT(tlsh_begin) void tlsh_begin(void) {
  if (!tlsh_tables_built) build_tables();
  __builtin_memset(buckets, 0, TLSH_BUCKETS * sizeof *buckets);
  checksum = 0;
  seen = 0;
  __builtin_memset(input - HISTORY_BYTES, 0, HISTORY_BYTES);
}

/*
 * The window's bytes [p, end) in the input: each adds its six triplets to the buckets when
 * `count_buckets`, and steps the checksum when `sum` is non-null. Inlined with both constant, so
 * each of the three uses is its own loop. b1..b4 (the four bytes before p) stay in locals rather
 * than being read again from the input for each byte (four loads fewer a byte), and the loop is
 * unrolled twice.
 */
static inline __attribute__((always_inline)) void tlsh_run(const u8 *p, const u8 *end, u32 *sum, u32 count_buckets) {
  u32 b1 = p[-1], b2 = p[-2], b3 = p[-3], b4 = p[-4];
  u32 checksum_now = sum ? *sum : 0;
  _Pragma("clang loop unroll_count(2)")
  for (; p < end; p++) {
    u32 b0 = p[0];
    u32 a = pairs01[b0 << 8 | b1];
    if (sum) checksum_now = pearson[(a >> 24) ^ checksum_now];
    if (count_buckets) {
      u32 b = pairs02[b0 << 8 | b2];
      u32 c = pairs03[b0 << 8 | b3];
      buckets[pearson[(a & 0xff) ^ b2]]++;
      buckets[pearson[((a >> 8) & 0xff) ^ b3]]++;
      buckets[pearson[((a >> 16) & 0xff) ^ b4]]++;
      buckets[pearson[(b & 0xff) ^ b3]]++;
      buckets[pearson[(b >> 8) ^ b4]]++;
      buckets[pearson[c ^ b4]]++;
    }
    b4 = b3; b3 = b2; b2 = b1; b1 = b0;
  }
  if (sum) *sum = checksum_now;
}

/*
 * One call's input, of which only the bytes [from, to) add to the buckets, and every byte steps the
 * checksum when `with_checksum`: a share of the hash split by data (fast.ts's TlshShareHasher). The
 * bucket counts are additive over the bytes, and each byte's triplets read the four before it,
 * which the history keeps whichever share counted them; the checksum chains through every byte, so
 * one share computes it all. The first four bytes of the input only fill the window.
 */
EXPORT(tlsh_update_part) void tlsh_update_part(u32 length, u32 from, u32 to, u32 with_checksum) {
  u32 skip = seen >= TLSH_WINDOW - 1 ? 0 : TLSH_WINDOW - 1 - (u32)seen;
  if (skip > length) skip = length;
  if (from < skip) from = skip;
  if (to < from) to = from;
  const u8 *at = input + skip, *start = input + from, *stop = input + to, *end = input + length;
  if (with_checksum) {
    u32 sum = checksum;
    tlsh_run(at, start, &sum, 0);
    tlsh_run(start, stop, &sum, 1);
    tlsh_run(stop, end, &sum, 0);
    checksum = sum;
  } else {
    tlsh_run(start, stop, 0, 1);
  }
  seen += length;
  keep_history(length);
}

EXPORT(tlsh_update) void tlsh_update(u32 length) { tlsh_update_part(length, 0, length, 1); }
