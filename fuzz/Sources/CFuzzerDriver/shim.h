// libFuzzer's driver entry point (compiler-rt FuzzerInterface.h / FuzzerDriver.cpp), declared here
// because no installed header carries it. It lives in libclang_rt.fuzzer, which `-sanitize=fuzzer`
// links. The harnesses call it from their own `main` (see FuzzSupport/LibFuzzer.swift).
#pragma once
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
