// Whether this test executable is built under a sanitizer (clang: __has_feature; g++: __SANITIZE_*__), for the
// few bounds that a sanitizer's slowdown or shadow memory makes meaningless (say why where one is skipped).
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EG_TEST_UNDER_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define EG_TEST_UNDER_ASAN 1
#endif
#endif
#if !defined(EG_TEST_UNDER_TSAN) && defined(__SANITIZE_THREAD__)
#define EG_TEST_UNDER_TSAN 1
#endif
#if !defined(EG_TEST_UNDER_ASAN) && defined(__SANITIZE_ADDRESS__)
#define EG_TEST_UNDER_ASAN 1
#endif
#ifndef EG_TEST_UNDER_TSAN
#define EG_TEST_UNDER_TSAN 0
#endif
#ifndef EG_TEST_UNDER_ASAN
#define EG_TEST_UNDER_ASAN 0
#endif
#define EG_TEST_UNDER_SANITIZER (EG_TEST_UNDER_TSAN || EG_TEST_UNDER_ASAN)
