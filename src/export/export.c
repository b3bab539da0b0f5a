/*
 * export.c - format names, default output paths and dispatch.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name;
	int format;
	const char *ext;
} formats[] = {
	{ "perfetto", EXPORT_PERFETTO, ".pftrace" },
	{ "chrome", EXPORT_CHROME, ".json" },
	{ "sqlite", EXPORT_SQLITE, ".sqlite" },
	{ "csv", EXPORT_CSV, "" },
	{ "json", EXPORT_JSON, ".stats.json" },
	{ "html", EXPORT_HTML, ".html" },
};

int export_format_by_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(formats[i].name, name))
			return formats[i].format;
	return -1;
}

const char *export_format_name(int format)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].format == format)
			return formats[i].name;
	return "?";
}

const char *export_format_ext(int format)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].format == format)
			return formats[i].ext;
	return "";
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

char *export_default_path(const char *input, int format)
{
	static const char *const strip[] = { TRACE_FILE_EXT, ".json.gz", ".json", ".sqlite", ".pt.trace" };
	struct strbuf sb = STRBUF_INIT;
	size_t base;

	strbuf_addstr(&sb, input);
	for (size_t i = 0; i < ARRAY_SIZE(strip); i++)
		if (ends_with(sb.buf, strip[i]) && sb.len > strlen(strip[i])) {
			sb.len -= strlen(strip[i]);
			sb.buf[sb.len] = 0;
		}
	base = sb.len;
	strbuf_addstr(&sb, export_format_ext(format));
	if (!strcmp(sb.buf, input)) {
		/* "x.json" exported as Chrome JSON: never the input itself */
		sb.len = base;
		sb.buf[base] = 0;
		strbuf_addstr(&sb, ".export");
		strbuf_addstr(&sb, export_format_ext(format));
	}
	return sb.buf;
}

int export_write(const struct model *m, int format, const char *path, const struct export_opts *o)
{
	struct xout out;
	int ret;

	switch (format) {
	case EXPORT_SQLITE:
		if (!strcmp(path, "-"))
			return error("sqlite output needs a file name, not stdout");
		return export_sqlite(m, path, o);
	case EXPORT_CSV:
		return export_csv(m, path, o);
	case EXPORT_PERFETTO:
	case EXPORT_CHROME:
	case EXPORT_JSON:
	case EXPORT_HTML:
		break;
	default:
		return error("unknown export format %d", format);
	}
	if (xout_open(&out, path, o->force))
		return -1;
	switch (format) {
	case EXPORT_PERFETTO: ret = export_perfetto(m, &out, o); break;
	case EXPORT_CHROME: ret = export_chrome(m, &out, o); break;
	case EXPORT_JSON: ret = export_json(m, &out, o); break;
	default: ret = export_html(m, &out, o); break;
	}
	return xout_close(&out, ret == 0);
}
