/**
 * The property-based tests' defaults (test/helpers/fuzz.ts): the seed and the cases per property
 * when HASHD_FUZZ_SEED and HASHD_FUZZ_RUNS are unset. In a module without dependencies, so that
 * the test runner (scripts/test.ts) can choose another seed for a second Node's run.
 */
export const FUZZ_SEED_DEFAULT = 20_261_122
export const FUZZ_RUNS_DEFAULT = 200
