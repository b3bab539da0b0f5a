/*
 * trigger.h - what `gpuscope profile --on-demand`, `gpuscope capture` and the
 * collector (config.c, ondemand.c) must agree on: the --trigger conditions,
 * the trigger sockets' directory and the two permission checks.  Header
 * only: src/cli does not link the collector.
 *
 * The --trigger conditions (docs/always-on.md):
 *
 *   step_time>Fx median   a step (an NVTX range named --step-range) that took
 *                         more than F times the median of the recent steps
 *   temp>C                a GPU above C degrees Celsius (parsed; not acted on)
 *   mem_used>P%           GPU memory above P percent used (parsed; not acted on)
 */
#ifndef GS_COLLECT_TRIGGER_H
#define GS_COLLECT_TRIGGER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum trigger_kind {
	TRIGGER_NONE = 0,
	TRIGGER_STEP_TIME = 1,
	TRIGGER_TEMP = 2,
	TRIGGER_MEM_USED = 3,
};

/*
 * trigger_parse - the kind of @spec and its threshold in *@value; 0
 * (TRIGGER_NONE) when @spec is not one of the forms above.  Spaces around
 * the parts are allowed ("step_time > 1.3x median").
 */
static inline int trigger_parse(const char *spec, double *value)
{
	static const struct { const char *name; int kind; } names[] = {
		{ "step_time", TRIGGER_STEP_TIME }, { "temp", TRIGGER_TEMP },
		{ "mem_used", TRIGGER_MEM_USED },
	};
	const char *p = spec;
	char *end;
	double v;
	int kind = TRIGGER_NONE;

	if (!p)
		return TRIGGER_NONE;
	while (*p == ' ')
		p++;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i].name);
		if (!strncmp(p, names[i].name, n)) {
			kind = names[i].kind;
			p += n;
			break;
		}
	}
	if (!kind)
		return TRIGGER_NONE;
	while (*p == ' ')
		p++;
	if (*p++ != '>')
		return TRIGGER_NONE;
	v = strtod(p, &end);
	if (end == p || !(v > 0))
		return TRIGGER_NONE;
	p = end;
	while (*p == ' ')
		p++;
	if (kind == TRIGGER_STEP_TIME) {
		/* a factor of the median: "1.3x median"; more than 1, or every step triggers */
		if (*p != 'x' || !(v > 1))
			return TRIGGER_NONE;
		p++;
		while (*p == ' ')
			p++;
		if (strcmp(p, "median"))
			return TRIGGER_NONE;
	} else if (kind == TRIGGER_MEM_USED) {
		if (*p != '%' || v > 100)
			return TRIGGER_NONE;
		if (p[1])
			return TRIGGER_NONE;
	} else if (*p) {
		return TRIGGER_NONE;
	}
	*value = v;
	return kind;
}

/*
 * trigger_ctl_dir - the directory of the user's trigger sockets, into
 * @buf: @override (GPUSCOPE_CTL_DIR) when set, else
 * $XDG_RUNTIME_DIR/gpuscope (systemd's per-user 0700 tmpfs), else
 * /tmp/gpuscope-UID.  Each on-demand process listens on DIR/PID.sock.
 */
static inline void trigger_ctl_dir(const char *override, char *buf, size_t cap)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (override && *override)
		snprintf(buf, cap, "%s", override);
	else if (xdg && *xdg)
		snprintf(buf, cap, "%s/gpuscope", xdg);
	else
		snprintf(buf, cap, "/tmp/gpuscope-%u", (unsigned)geteuid());
}

/*
 * trigger_dir_ok - whether @dir may hold trigger sockets: a directory, not
 * a link, owned by the user, that nobody else may enter or write (mode &
 * 077 == 0).  With @create, made 0700 when missing.  Connecting to a Unix
 * socket needs write permission on it and search permission on every
 * directory above it: a 0700 directory of the user keeps every other user
 * (but root) out, on every system, whatever the socket's own mode; and a
 * directory someone else made (in /tmp) is refused, so nobody can plant a
 * socket where the user's `gpuscope capture` would connect.
 */
static inline int trigger_dir_ok(const char *dir, int create)
{
	struct stat st;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return 0;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return 0;
	return 1;
}

/*
 * trigger_peer_ok - whether a connection's peer (user id @peer, from
 * SO_PEERCRED) may trigger a capture in a process of user @self: the same
 * user, or root.  The second check behind the directory's: a socket passed
 * on by other means still answers only its user.
 */
static inline int trigger_peer_ok(uint32_t peer, uint32_t self)
{
	return peer == self || peer == 0;
}

#endif
