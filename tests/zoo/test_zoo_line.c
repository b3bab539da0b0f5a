/*
 * test_zoo_line.c - the zoo's result line and median (examples/zoo/zoo_line.h),
 * which every CUDA C case prints and record.sh parses.  check_zoo.sh checks
 * that the Python cases' zoo_common.format_line prints the same literal line.
 */
#include "gstest.h"
#include "zoo_line.h"

static void test_line_format(void)
{
	char buf[128];
	int n = zoo_format_line(buf, sizeof(buf), "sync", "broken", 6.17034, 60);
	CHECK_STR(buf, "zoo: case=sync variant=broken step_ms=6.1703 steps=60");
	CHECK_EQ_I64(n, (int64_t)strlen(buf));
	zoo_format_line(buf, sizeof(buf), "serial-copy", "fixed", 0.5, 3);
	CHECK_STR(buf, "zoo: case=serial-copy variant=fixed step_ms=0.5000 steps=3");
}

static void test_median(void)
{
	double odd[] = { 5.0, 1.0, 3.0 };
	double even[] = { 4.0, 1.0, 3.0, 2.0 };
	double one[] = { 7.25 };
	double skewed[] = { 1.0, 1.1, 0.9, 50.0, 1.05 }; /* one outlier step */
	CHECK_NEAR(zoo_median(odd, 3), 3.0, 0.0);
	CHECK_NEAR(zoo_median(even, 4), 2.5, 0.0);
	CHECK_NEAR(zoo_median(one, 1), 7.25, 0.0);
	CHECK_NEAR(zoo_median(skewed, 5), 1.05, 0.0);
	CHECK_NEAR(zoo_median(NULL, 0), 0.0, 0.0);
	CHECK_NEAR(odd[0], 1.0, 0.0); /* sorted in place */
}

static const struct gstest tests[] = {
	GSTEST(test_line_format),
	GSTEST(test_median),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
