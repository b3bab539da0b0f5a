/*
 * gstest.h - the unit-test harness.
 *
 * Each test is a function; gstest_main() runs each one in a child process,
 * so a crash fails that test alone and the others still run.  It prints
 * "ok"/"not ok" per test and closes with "N passed, N failed".
 *
 *   static void test_roundtrip(void) { CHECK_EQ_U64(1 + 1, 2); }
 *   static const struct gstest tests[] = { GSTEST(test_roundtrip), { 0 } };
 *   int main(int argc, char **argv) { return gstest_main(argc, argv, tests); }
 */
#ifndef GS_GSTEST_H
#define GS_GSTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct gstest {
	const char *name;
	void (*fn)(void);
};
#define GSTEST(f) { #f, f }

extern int gstest_failures;
void gstest_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int gstest_main(int argc, char **argv, const struct gstest *tests);
/* A fresh temporary directory for this test (removed at exit); path is static. */
const char *gstest_tmpdir(void);
/* Path of a file under tests/data (the source tree). */
const char *gstest_data(const char *rel);
/*
 * The shared folder of traces recorded by others (shared/validation), or
 * NULL when it is not there: $GS_SHARED_DIR, else the folder "shared" beside
 * the source tree (where CI keeps its copy).  Tests that use it skip that
 * part, saying so, when it is absent.
 */
const char *gstest_shared_dir(void);

#define CHECK(cond) \
	do { if (!(cond)) gstest_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)
#define CHECK_EQ_U64(a, b) \
	do { uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
	     if (a_ != b_) gstest_fail(__FILE__, __LINE__, "%s == %" PRIu64 ", expected %s == %" PRIu64, \
				      #a, a_, #b, b_); } while (0)
#define CHECK_EQ_I64(a, b) \
	do { int64_t a_ = (int64_t)(a), b_ = (int64_t)(b); \
	     if (a_ != b_) gstest_fail(__FILE__, __LINE__, "%s == %" PRId64 ", expected %" PRId64, \
				      #a, a_, b_); } while (0)
#define CHECK_NEAR(a, b, tol) \
	do { double a_ = (double)(a), b_ = (double)(b); \
	     if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) \
		gstest_fail(__FILE__, __LINE__, "%s == %.9g, expected %.9g +- %g", #a, a_, b_, (double)(tol)); \
	} while (0)
#define CHECK_STR(a, b) \
	do { const char *a_ = (a), *b_ = (b); \
	     if (!a_ || !b_ || strcmp(a_, b_)) gstest_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", \
						       #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)
#define CHECK_CONTAINS(hay, needle) \
	do { const char *h_ = (hay), *n_ = (needle); \
	     if (!h_ || !strstr(h_, n_)) gstest_fail(__FILE__, __LINE__, "%s does not contain \"%s\"", #hay, n_); } while (0)

#endif
