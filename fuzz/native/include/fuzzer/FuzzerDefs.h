// The two declarations Jazzer.js's addon sources take from compiler-rt's lib/fuzzer/FuzzerDefs.h
// (its utils.h includes <fuzzer/FuzzerDefs.h>), which Debian's libclang-rt-16-dev does not ship:
// libFuzzer's entry point and the type of its callback, as upstream LLVM 16 declares them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fuzzer {
typedef int (*UserCallback)(const uint8_t *Data, size_t Size);
int FuzzerDriver(int *argc, char ***argv, UserCallback Callback);
} // namespace fuzzer
