/*
 * test_trigger.c - the parts of on-demand tracing that profile, capture
 * and the collector share (src/collect/trigger.h): the --trigger grammar,
 * the trigger directory's check and the peer check.
 */
#include "gstest.h"
#include "collect/trigger.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_parse_step_time(void)
{
	double v = 0;

	CHECK_EQ_I64(trigger_parse("step_time>1.3x median", &v), TRIGGER_STEP_TIME);
	CHECK_NEAR(v, 1.3, 1e-12);
	CHECK_EQ_I64(trigger_parse(" step_time > 2x  median", &v), TRIGGER_STEP_TIME);
	CHECK_NEAR(v, 2.0, 1e-12);
	/* a factor of 1 or less would fire on every other step */
	CHECK_EQ_I64(trigger_parse("step_time>1x median", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("step_time>0.5x median", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("step_time>1.3x mean", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("step_time>1.3", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("step_time<1.3x median", &v), TRIGGER_NONE);
}

static void test_parse_gpu(void)
{
	double v = 0;

	CHECK_EQ_I64(trigger_parse("temp>85", &v), TRIGGER_TEMP);
	CHECK_NEAR(v, 85, 1e-12);
	CHECK_EQ_I64(trigger_parse("mem_used>95%", &v), TRIGGER_MEM_USED);
	CHECK_NEAR(v, 95, 1e-12);
	CHECK_EQ_I64(trigger_parse("mem_used>95", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("mem_used>120%", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("temp>85C", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("temp>-3", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("power>300", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse("", &v), TRIGGER_NONE);
	CHECK_EQ_I64(trigger_parse(NULL, &v), TRIGGER_NONE);
}

static void test_dir_check(void)
{
	char tmpl[] = "/tmp/gs-trigger.XXXXXX", sub[64];
	const char *base = mkdtemp(tmpl);

	CHECK(base != NULL);
	if (!base)
		return;
	snprintf(sub, sizeof(sub), "%s/ctl", base);
	/* made 0700 when missing */
	CHECK_EQ_I64(trigger_dir_ok(sub, 1), 1);
	CHECK_EQ_I64(trigger_dir_ok(sub, 0), 1);
	/* others may enter: refused */
	CHECK_EQ_I64(chmod(sub, 0755), 0);
	CHECK_EQ_I64(trigger_dir_ok(sub, 0), 0);
	CHECK_EQ_I64(trigger_dir_ok(sub, 1), 0);
	CHECK_EQ_I64(chmod(sub, 0700), 0);
	rmdir(sub);
	/* a link, even to a private directory, is refused */
	CHECK_EQ_I64(symlink(base, sub), 0);
	CHECK_EQ_I64(chmod(base, 0700), 0);
	CHECK_EQ_I64(trigger_dir_ok(sub, 0), 0);
	unlink(sub);
	/* missing, not created */
	CHECK_EQ_I64(trigger_dir_ok(sub, 0), 0);
	rmdir(base);
}

static void test_peer_check(void)
{
	CHECK_EQ_I64(trigger_peer_ok(1000, 1000), 1);
	CHECK_EQ_I64(trigger_peer_ok(0, 1000), 1);     /* root */
	CHECK_EQ_I64(trigger_peer_ok(1001, 1000), 0);  /* another user */
	CHECK_EQ_I64(trigger_peer_ok(65534, 0), 0);    /* nobody, at root's process */
}

static void test_ctl_dir(void)
{
	char buf[256], want[256];
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *saved = xdg ? strdup(xdg) : NULL;

	trigger_ctl_dir("/x/y", buf, sizeof(buf));
	CHECK_STR(buf, "/x/y");
	setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
	trigger_ctl_dir(NULL, buf, sizeof(buf));
	CHECK_STR(buf, "/run/user/7/gpuscope");
	unsetenv("XDG_RUNTIME_DIR");
	trigger_ctl_dir("", buf, sizeof(buf));
	snprintf(want, sizeof(want), "/tmp/gpuscope-%u", (unsigned)geteuid());
	CHECK_STR(buf, want);
	if (saved)
		setenv("XDG_RUNTIME_DIR", saved, 1);
	free(saved);
}

static const struct gstest tests[] = {
	GSTEST(test_parse_step_time),
	GSTEST(test_parse_gpu),
	GSTEST(test_dir_check),
	GSTEST(test_peer_check),
	GSTEST(test_ctl_dir),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
