/*
 * export.c - format names, default output paths and dispatch.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The stream formats open their output here; sqlite and csv name their own files. */
static int write_stream(const struct export_input *in, const char *path,
			int (*fn)(const struct export_input *, struct xout *))
{
	struct xout out;

	if (xout_open(&out, path, in->o.force))
		return -1;
	return xout_close(&out, fn(in, &out) == 0);
}

static int w_perfetto(const struct export_input *in, const char *path)
{
	return write_stream(in, path, export_perfetto);
}

static int w_chrome(const struct export_input *in, const char *path)
{
	return write_stream(in, path, export_chrome);
}

static int w_json(const struct export_input *in, const char *path)
{
	return write_stream(in, path, export_json);
}

static int w_html(const struct export_input *in, const char *path)
{
	return write_stream(in, path, export_html);
}

/*
 * The formats, one row each: `--format NAME`, its default suffix, and its
 * writer.  A new format is one writer and one row.
 */
static const struct export_writer formats[] = {
	{ "perfetto", EXPORT_PERFETTO, ".pftrace", 1, w_perfetto },
	{ "chrome", EXPORT_CHROME, ".json", 1, w_chrome },
	{ "sqlite", EXPORT_SQLITE, ".sqlite", 0, export_sqlite },
	{ "csv", EXPORT_CSV, "", 1, export_csv },
	{ "json", EXPORT_JSON, ".stats.json", 1, w_json },
	{ "html", EXPORT_HTML, ".html", 1, w_html },
};

const struct export_writer *export_writer_of(int format)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].format == format)
			return &formats[i];
	return NULL;
}

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

int export_write(const struct export_input *in, int format, const char *path)
{
	const struct export_writer *w = export_writer_of(format);

	if (!w)
		return error("unknown export format %d", format);
	if (!w->to_stdout && !strcmp(path, "-"))
		return error("%s output needs a file name, not stdout", w->name);
	return w->write(in, path);
}
