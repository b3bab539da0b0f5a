/*
 * test_format_doc.c - docs/report-format.md's byte tables agree with trace.h.
 *
 * Every record of the report format has a section in the spec headed
 * "### NAME (type N, S bytes)" (the file, chunk and entry headers: "NAME (S
 * bytes)" at level ## or ###) with a table "| offset | size | field | meaning
 * |".  This test parses those sections and compares them with the compiler's
 * view of the structs: the type number with trace_event_type_by_name(), S
 * with sizeof, every row with offsetof/sizeof of the field it names (arrays
 * spelt "grid[3]" with the whole array's size), and the rows must cover the
 * struct from 0 to S without gaps or overlaps ("(padding)" rows name the
 * holes the compiler leaves).  Every field of the table below must have its
 * row, and every member that trace.h declares must be in the table below, so
 * a new field fails here until it is documented.
 *
 * The checker collects its findings as text instead of failing at once, so
 * that the tests at the end can feed it broken tables and see it object.
 */
#include "gstest.h"
#include "trace/trace.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

/* ---- what the compiler knows ---- */

struct fmt_field {
	const char *rec;     /* struct name without "struct " */
	const char *name;
	size_t off, size;
	size_t count;        /* array elements, 0 for a scalar */
};

#define MEMBER(s, f) (((struct s *)0)->f)
#define F(s, f) { #s, #f, offsetof(struct s, f), sizeof(MEMBER(s, f)), 0 }
#define FA(s, f) { #s, #f, offsetof(struct s, f), sizeof(MEMBER(s, f)), \
		   sizeof(MEMBER(s, f)) / sizeof(MEMBER(s, f)[0]) }

static const struct fmt_field fields[] = {
	FA(trace_file_header, magic), F(trace_file_header, version),
	F(trace_file_header, min_reader), F(trace_file_header, header_size),
	F(trace_file_header, features), F(trace_file_header, created_realtime_ns),
	FA(trace_file_header, reserved), F(trace_file_header, header_crc),

	F(trace_chunk_header, magic), F(trace_chunk_header, type), F(trace_chunk_header, flags),
	F(trace_chunk_header, stream), F(trace_chunk_header, stored_size),
	F(trace_chunk_header, raw_size), F(trace_chunk_header, payload_crc),
	F(trace_chunk_header, reserved), F(trace_chunk_header, header_crc),

	F(trace_index_head, entry_size), F(trace_index_head, count), F(trace_index_head, reserved),

	F(trace_index_entry, offset), F(trace_index_entry, t_lo), F(trace_index_entry, t_hi),
	F(trace_index_entry, span_lo), F(trace_index_entry, span_hi), F(trace_index_entry, end_hi),
	F(trace_index_entry, stream), F(trace_index_entry, types), F(trace_index_entry, chunk_type),
	F(trace_index_entry, flags), F(trace_index_entry, reserved),

	F(trace_index_tail, index_offset), FA(trace_index_tail, magic),

	F(trace_entry, type), F(trace_entry, size), F(trace_entry, reserved),

	F(trace_string, id), F(trace_string, len),

	F(trace_process, pid), F(trace_process, ppid), F(trace_process, start_realtime_ns),
	F(trace_process, start_mono_ns), F(trace_process, cmdline_id), F(trace_process, exe_id),
	F(trace_process, host_id), F(trace_process, flags),

	F(trace_thread, time), F(trace_thread, pid), F(trace_thread, tid),
	F(trace_thread, name_id), F(trace_thread, flags),

	F(trace_nvtx_range, start), F(trace_nvtx_range, end), F(trace_nvtx_range, pid),
	F(trace_nvtx_range, tid), F(trace_nvtx_range, end_tid), F(trace_nvtx_range, name_id),
	F(trace_nvtx_range, domain_id), F(trace_nvtx_range, category), F(trace_nvtx_range, color),
	F(trace_nvtx_range, kind), F(trace_nvtx_range, payload_type), F(trace_nvtx_range, level),
	F(trace_nvtx_range, payload), F(trace_nvtx_range, range_id),

	F(trace_nvtx_end, range_id), F(trace_nvtx_end, end), F(trace_nvtx_end, tid),
	F(trace_nvtx_end, reserved),

	F(trace_nvtx_mark, time), F(trace_nvtx_mark, pid), F(trace_nvtx_mark, tid),
	F(trace_nvtx_mark, name_id), F(trace_nvtx_mark, domain_id), F(trace_nvtx_mark, category),
	F(trace_nvtx_mark, color), F(trace_nvtx_mark, payload_type), FA(trace_nvtx_mark, reserved),
	F(trace_nvtx_mark, payload),

	F(trace_name, kind), F(trace_name, domain_id), F(trace_name, id), F(trace_name, pid),
	F(trace_name, name_id),

	F(trace_osrt, start), F(trace_osrt, end), F(trace_osrt, pid), F(trace_osrt, tid),
	F(trace_osrt, func), F(trace_osrt, flags), F(trace_osrt, err), F(trace_osrt, result),
	F(trace_osrt, arg),

	F(trace_cpu_sample, time), F(trace_cpu_sample, run_ns), F(trace_cpu_sample, wait_ns),
	F(trace_cpu_sample, pid), F(trace_cpu_sample, tid),

	F(trace_api, start), F(trace_api, end), F(trace_api, pid), F(trace_api, tid),
	F(trace_api, correlation), F(trace_api, cbid), F(trace_api, name_id), F(trace_api, domain),
	F(trace_api, flags), F(trace_api, status), F(trace_api, reserved),

	F(trace_kernel, start), F(trace_kernel, end), F(trace_kernel, pid), F(trace_kernel, device),
	F(trace_kernel, context), F(trace_kernel, stream), F(trace_kernel, correlation),
	F(trace_kernel, name_id), F(trace_kernel, mangled_id), F(trace_kernel, graph_id),
	FA(trace_kernel, grid), FA(trace_kernel, block), F(trace_kernel, static_smem),
	F(trace_kernel, dynamic_smem), F(trace_kernel, registers), F(trace_kernel, flags),

	F(trace_memcpy, start), F(trace_memcpy, end), F(trace_memcpy, bytes), F(trace_memcpy, pid),
	F(trace_memcpy, device), F(trace_memcpy, context), F(trace_memcpy, stream),
	F(trace_memcpy, correlation), F(trace_memcpy, kind), F(trace_memcpy, src_kind),
	F(trace_memcpy, dst_kind), F(trace_memcpy, reserved), F(trace_memcpy, flags),
	F(trace_memcpy, dst_device), F(trace_memcpy, graph_id),

	F(trace_memset, start), F(trace_memset, end), F(trace_memset, bytes), F(trace_memset, pid),
	F(trace_memset, device), F(trace_memset, context), F(trace_memset, stream),
	F(trace_memset, correlation), F(trace_memset, value), F(trace_memset, mem_kind),
	F(trace_memset, reserved), F(trace_memset, flags), F(trace_memset, graph_id),

	F(trace_sync, start), F(trace_sync, end), F(trace_sync, pid), F(trace_sync, device),
	F(trace_sync, context), F(trace_sync, stream), F(trace_sync, event),
	F(trace_sync, correlation), F(trace_sync, type), F(trace_sync, wait_stream),
	F(trace_sync, wait_correlation),

	F(trace_memory, time), F(trace_memory, address), F(trace_memory, bytes),
	F(trace_memory, pid), F(trace_memory, device), F(trace_memory, context),
	F(trace_memory, stream), F(trace_memory, correlation), F(trace_memory, op),
	F(trace_memory, mem_kind), F(trace_memory, reserved),

	F(trace_device, id), F(trace_device, name_id), FA(trace_device, uuid),
	F(trace_device, sm_count), F(trace_device, cc_major), F(trace_device, cc_minor),
	F(trace_device, core_clock_khz), F(trace_device, global_mem), F(trace_device, mem_clock_khz),
	F(trace_device, mem_bus_width), F(trace_device, pci_domain), F(trace_device, pci_bus),
	F(trace_device, pci_device), F(trace_device, max_threads_per_sm), F(trace_device, pid),
	F(trace_device, reserved),

	F(trace_metric, time), F(trace_metric, value), F(trace_metric, device),
	F(trace_metric, name_id), F(trace_metric, pid), F(trace_metric, flags),

	F(trace_drops, pid), F(trace_drops, source), F(trace_drops, count),

	F(trace_capture, time), F(trace_capture, pid), F(trace_capture, what),
	F(trace_capture, trigger), F(trace_capture, id), F(trace_capture, ring_from),

	F(trace_warning, time), F(trace_warning, pid), F(trace_warning, message_id),

	F(trace_kmetric, time), F(trace_kmetric, cost_ns), F(trace_kmetric, value),
	F(trace_kmetric, pid), F(trace_kmetric, tid), F(trace_kmetric, correlation),
	F(trace_kmetric, device), F(trace_kmetric, kernel_id), F(trace_kmetric, key_id),
	F(trace_kmetric, metric_id), F(trace_kmetric, instance), F(trace_kmetric, passes),
	F(trace_kmetric, flags), F(trace_kmetric, reserved),

	F(trace_torch_mem, time), F(trace_torch_mem, allocated), F(trace_torch_mem, reserved),
	F(trace_torch_mem, active), F(trace_torch_mem, inactive_split),
	F(trace_torch_mem, allocated_peak), F(trace_torch_mem, reserved_peak),
	F(trace_torch_mem, alloc_count), F(trace_torch_mem, free_count), F(trace_torch_mem, delta),
	F(trace_torch_mem, pid), F(trace_torch_mem, tid), F(trace_torch_mem, device),
	F(trace_torch_mem, retries), F(trace_torch_mem, ooms), F(trace_torch_mem, segments),
	F(trace_torch_mem, step), F(trace_torch_mem, kind), F(trace_torch_mem, flags),

	F(trace_oom, time), F(trace_oom, requested), F(trace_oom, device_free),
	F(trace_oom, device_total), F(trace_oom, allocated), F(trace_oom, reserved),
	F(trace_oom, inactive_split), F(trace_oom, largest_free), FA(trace_oom, blocks),
	F(trace_oom, pid), F(trace_oom, tid), F(trace_oom, device), F(trace_oom, nblocks),
	F(trace_oom, detail_id), F(trace_oom, flags),

	F(trace_proc_attr, time), F(trace_proc_attr, pid), F(trace_proc_attr, rank),
	F(trace_proc_attr, local_rank), F(trace_proc_attr, world_size),
	F(trace_proc_attr, launcher_id), F(trace_proc_attr, cpus_id), F(trace_proc_attr, ncpus),
	F(trace_proc_attr, mempolicy), F(trace_proc_attr, cpu_nodes), F(trace_proc_attr, mem_nodes),
	F(trace_proc_attr, clock_offset_ns), F(trace_proc_attr, clock_error_ns),
	F(trace_proc_attr, flags), F(trace_proc_attr, reserved),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

struct fmt_record {
	const char *doc;     /* the NAME of the section heading */
	const char *rec;     /* struct name */
	int type;            /* TRACE_EV_*, 0 for the headers */
	size_t size;
};

#define HDR(doc, s) { doc, #s, 0, sizeof(struct s) }
#define EV(doc, s, t) { doc, #s, t, sizeof(struct s) }

/* In the order of the spec: the headers, then the entry types in type order. */
static const struct fmt_record records[] = {
	HDR("File header", trace_file_header),
	HDR("Chunk header", trace_chunk_header),
	HDR("Index head", trace_index_head),
	HDR("Index entry", trace_index_entry),
	HDR("Index tail", trace_index_tail),
	HDR("Entry header", trace_entry),
	EV("string", trace_string, TRACE_EV_STRING),
	EV("process", trace_process, TRACE_EV_PROCESS),
	EV("thread", trace_thread, TRACE_EV_THREAD),
	EV("nvtx_range", trace_nvtx_range, TRACE_EV_NVTX_RANGE),
	EV("nvtx_end", trace_nvtx_end, TRACE_EV_NVTX_END),
	EV("nvtx_mark", trace_nvtx_mark, TRACE_EV_NVTX_MARK),
	EV("name", trace_name, TRACE_EV_NAME),
	EV("osrt", trace_osrt, TRACE_EV_OSRT),
	EV("cpu_sample", trace_cpu_sample, TRACE_EV_CPU_SAMPLE),
	EV("api", trace_api, TRACE_EV_API),
	EV("kernel", trace_kernel, TRACE_EV_KERNEL),
	EV("memcpy", trace_memcpy, TRACE_EV_MEMCPY),
	EV("memset", trace_memset, TRACE_EV_MEMSET),
	EV("sync", trace_sync, TRACE_EV_SYNC),
	EV("memory", trace_memory, TRACE_EV_MEMORY),
	EV("device", trace_device, TRACE_EV_DEVICE),
	EV("metric", trace_metric, TRACE_EV_METRIC),
	EV("drops", trace_drops, TRACE_EV_DROPS),
	EV("capture", trace_capture, TRACE_EV_CAPTURE),
	EV("warning", trace_warning, TRACE_EV_WARNING),
	EV("kmetric", trace_kmetric, TRACE_EV_KMETRIC),
	EV("torch_mem", trace_torch_mem, TRACE_EV_TORCH_MEM),
	EV("oom", trace_oom, TRACE_EV_OOM),
	EV("proc_attr", trace_proc_attr, TRACE_EV_PROC_ATTR),
};
#define NRECORDS (sizeof(records) / sizeof(records[0]))

static const struct fmt_record *record_by_doc(const char *name)
{
	for (size_t i = 0; i < NRECORDS; i++)
		if (!strcmp(records[i].doc, name))
			return &records[i];
	return NULL;
}

static const struct fmt_field *field_of(const char *rec, const char *name)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!strcmp(fields[i].rec, rec) && !strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}

/* ---- reading files ---- */

static const char *source_dir(void)
{
	const char *root = getenv("GS_SOURCE_DIR");

	if (root && *root)
		return root;
#ifdef GS_SOURCE_DIR_DEFAULT
	return GS_SOURCE_DIR_DEFAULT;
#else
	return ".";
#endif
}

/* The whole of $GS_SOURCE_DIR/@rel as a NUL-terminated string, or NULL. */
static char *read_source(const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096], buf[8192];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", source_dir(), rel);
	f = fopen(path, "r");
	if (!f) {
		gstest_fail(__FILE__, __LINE__, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return sb.buf ? sb.buf : xstrdup("");
}

/* ---- the checker ---- */

#define MAX_ROWS 64

struct doc_row {
	size_t off, size;
	char field[64];
	int line;
};

struct doc_check {
	struct strbuf problems;    /* one line per problem */
	int nproblems;
	int seen[NRECORDS];        /* sections found per record */
	int last_type;             /* type of the previous typed section, for the order */
};

__attribute__((format(printf, 3, 4)))
static void problem(struct doc_check *c, int line, const char *fmt, ...)
{
	va_list ap;

	strbuf_addf(&c->problems, "line %d: ", line);
	va_start(ap, fmt);
	strbuf_vaddf(&c->problems, fmt, ap);
	va_end(ap);
	strbuf_addch(&c->problems, '\n');
	c->nproblems++;
}

/* Copy the trimmed text between @s and @e into @out (at most @n - 1 bytes). */
static void trim_copy(char *out, size_t n, const char *s, const char *e)
{
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if ((size_t)(e - s) >= n)
		e = s + n - 1;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = 0;
}

/*
 * Split a table line into its cells (text between unescaped '|'); the first
 * @max cells go to @cells, of @n bytes each.  Returns the number of cells.
 */
static int split_row(const char *line, const char *end, char cells[][256], int max)
{
	const char *p = line, *cell;
	int k = 0;

	if (p >= end || *p != '|')
		return 0;
	cell = ++p;
	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end) {
			p++;
			continue;
		}
		if (*p != '|')
			continue;
		if (k < max)
			trim_copy(cells[k], sizeof(cells[k]), cell, p);
		k++;
		cell = p + 1;
	}
	return k;
}

/* A decimal number that is the whole of @s. */
static int parse_size(const char *s, size_t *out)
{
	char *e;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || *e)
		return -1;
	*out = (size_t)v;
	return 0;
}

/*
 * Parse a heading "NAME (type N, S bytes)" or "NAME (S bytes)" (after the
 * hashes).  Returns 1 when it has that form, 0 otherwise.
 */
static int parse_heading(const char *s, const char *end, char *name, size_t n,
			 int *type, size_t *size)
{
	const char *open = NULL, *p;
	char inner[128], *q;

	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	if (end - s < 8 || memcmp(end - 7, " bytes)", 7))
		return 0;
	for (p = s; p < end; p++)
		if (*p == '(')
			open = p;
	if (!open || open == s)
		return 0;
	trim_copy(name, n, s, open);
	trim_copy(inner, sizeof(inner), open + 1, end - 7);
	*type = -1;
	q = inner;
	if (!strncmp(q, "type ", 5)) {
		char *e;
		long t = strtol(q + 5, &e, 10);
		if (e == q + 5 || *e != ',')
			return 0;
		*type = (int)t;
		q = e + 1;
		while (*q == ' ')
			q++;
	}
	return !parse_size(q, size);
}

/* Check one section's rows against its record. */
static void check_rows(struct doc_check *c, const struct fmt_record *r, int line,
		       const struct doc_row *rows, int nrows)
{
	size_t pos = 0;
	int documented[NFIELDS] = { 0 };

	if (!nrows) {
		problem(c, line, "%s: no table | offset | size | field | meaning |", r->doc);
		return;
	}
	for (int i = 0; i < nrows; i++) {
		const struct doc_row *w = &rows[i];
		char base[64];
		size_t count = 0;
		const char *br;
		const struct fmt_field *f;

		if (w->off != pos)
			problem(c, w->line, "%s: row '%s' at offset %zu, but the row before ends at %zu (%s)",
				r->doc, w->field, w->off, pos, w->off > pos ? "a gap" : "an overlap");
		pos = w->off + w->size;
		if (!w->size)
			problem(c, w->line, "%s: row '%s' has size 0", r->doc, w->field);
		if (!strcmp(w->field, "(padding)")) {
			/* must be a hole of the struct: no field may lie in it */
			for (size_t k = 0; k < NFIELDS; k++)
				if (!strcmp(fields[k].rec, r->rec) && fields[k].off < w->off + w->size &&
				    w->off < fields[k].off + fields[k].size)
					problem(c, w->line, "%s: (padding) at %zu+%zu covers field '%s' at %zu+%zu",
						r->doc, w->off, w->size, fields[k].name,
						fields[k].off, fields[k].size);
			continue;
		}
		br = strchr(w->field, '[');
		trim_copy(base, sizeof(base), w->field, br ? br : w->field + strlen(w->field));
		if (br) {
			char num[32];
			const char *close = strchr(br, ']');
			trim_copy(num, sizeof(num), br + 1, close ? close : br + 1);
			if (!close || close[1] || parse_size(num, &count) || !count) {
				problem(c, w->line, "%s: field '%s' is not NAME or NAME[N]", r->doc, w->field);
				continue;
			}
		}
		f = field_of(r->rec, base);
		if (!f) {
			problem(c, w->line, "%s: struct %s has no field '%s'", r->doc, r->rec, base);
			continue;
		}
		documented[f - fields]++;
		if (documented[f - fields] > 1)
			problem(c, w->line, "%s: field '%s' has more than one row", r->doc, base);
		if (f->count != count) {
			if (f->count)
				problem(c, w->line, "%s: field '%s' is an array: write %s[%zu]", r->doc,
					w->field, base, f->count);
			else
				problem(c, w->line, "%s: field '%s' is not an array", r->doc, w->field);
		}
		if (w->off != f->off)
			problem(c, w->line, "%s: field '%s' at offset %zu, offsetof says %zu", r->doc,
				base, w->off, f->off);
		if (w->size != f->size)
			problem(c, w->line, "%s: field '%s' of size %zu, sizeof says %zu", r->doc,
				base, w->size, f->size);
	}
	if (pos != r->size)
		problem(c, rows[nrows - 1].line, "%s: the rows end at %zu, the struct at %zu",
			r->doc, pos, r->size);
	for (size_t k = 0; k < NFIELDS; k++)
		if (!strcmp(fields[k].rec, r->rec) && !documented[k])
			problem(c, line, "%s: no row for field '%s' (offset %zu, size %zu)", r->doc,
				fields[k].name, fields[k].off, fields[k].size);
}

/* Check a heading's name, type and size; returns its record or NULL. */
static const struct fmt_record *check_heading(struct doc_check *c, int line, const char *name,
					       int type, size_t size)
{
	const struct fmt_record *r = record_by_doc(name);
	int want;

	if (!r) {
		problem(c, line, "section '%s' names no record of trace.h this test knows", name);
		return NULL;
	}
	c->seen[r - records]++;
	if (c->seen[r - records] > 1)
		problem(c, line, "%s: a second section", name);
	if (r->type) {
		want = trace_event_type_by_name(name);
		if (type != want)
			problem(c, line, "%s: type %d in the heading, trace_event_type_by_name says %d",
				name, type, want);
		if (r->type != want)
			problem(c, line, "%s: this test maps it to %s of type %d, the code says %d",
				name, r->rec, r->type, want);
		if (trace_record_size((unsigned)want) != r->size)
			problem(c, line, "%s: trace_record_size %zu, sizeof(struct %s) %zu", name,
				trace_record_size((unsigned)want), r->rec, r->size);
		if (type <= c->last_type)
			problem(c, line, "%s: type %d after type %d (sections go in type order)",
				name, type, c->last_type);
		c->last_type = type;
	} else if (type != -1) {
		problem(c, line, "%s: a header has no type, the heading says type %d", name, type);
	}
	if (size != r->size)
		problem(c, line, "%s: %zu bytes in the heading, sizeof(struct %s) is %zu", name,
			size, r->rec, r->size);
	return r;
}

/*
 * check_doc - check every byte-table section of the markdown @text.
 * Findings go to c->problems; sections found are counted in c->seen.
 */
static void check_doc(struct doc_check *c, const char *text)
{
	const struct fmt_record *cur = NULL;
	struct doc_row rows[MAX_ROWS];
	int nrows = 0, cur_line = 0, in_table = 0, table_done = 0, lineno = 0;
	const char *p = text;

	while (*p) {
		const char *e = strchr(p, '\n');
		char cells[5][256];
		int k;

		if (!e)
			e = p + strlen(p);
		lineno++;
		if (*p == '#') {
			const char *h = p;
			char name[128];
			int type;
			size_t size;

			if (cur)
				check_rows(c, cur, cur_line, rows, nrows);
			cur = NULL;
			while (h < e && *h == '#')
				h++;
			if (h - p >= 2 && h - p <= 3 &&
			    parse_heading(h, e, name, sizeof(name), &type, &size)) {
				cur = check_heading(c, lineno, name, type, size);
				cur_line = lineno;
				nrows = 0;
				in_table = table_done = 0;
			}
		} else if (cur && !table_done && *p == '|') {
			k = split_row(p, e, cells, 5);
			if (!in_table) {
				in_table = 1;
				if (k != 4 || strcmp(cells[0], "offset") || strcmp(cells[1], "size") ||
				    strcmp(cells[2], "field") || strcmp(cells[3], "meaning"))
					problem(c, lineno, "%s: the table's columns are not "
						"| offset | size | field | meaning |", cur->doc);
			} else if (k >= 1 && cells[0][0] == '-') {
				/* the |---| line */
			} else if (k != 4) {
				problem(c, lineno, "%s: a row of %d cells, not 4", cur->doc, k);
			} else if (nrows == MAX_ROWS) {
				problem(c, lineno, "%s: more than %d rows", cur->doc, MAX_ROWS);
			} else {
				struct doc_row *w = &rows[nrows];
				char *fld = cells[2];
				size_t len;

				/* the field may be written as code: `grid[3]` */
				if (*fld == '`')
					fld++;
				len = strlen(fld);
				if (len && fld[len - 1] == '`')
					fld[--len] = 0;
				w->line = lineno;
				trim_copy(w->field, sizeof(w->field), fld, fld + len);
				if (parse_size(cells[0], &w->off) || parse_size(cells[1], &w->size))
					problem(c, lineno, "%s: offset '%s' or size '%s' is not a number",
						cur->doc, cells[0], cells[1]);
				else if (!cells[3][0])
					problem(c, lineno, "%s: row '%s' has no meaning", cur->doc, w->field);
				else
					nrows++;
			}
		} else if (in_table) {
			table_done = 1;
		}
		p = *e ? e + 1 : e;
	}
	if (cur)
		check_rows(c, cur, cur_line, rows, nrows);
}

static void doc_check_init(struct doc_check *c)
{
	memset(c, 0, sizeof(*c));	/* problems: an empty strbuf, as STRBUF_INIT */
}

/* ---- trace.h's own declarations ---- */

/*
 * The member names struct @rec declares in the C text @h (comments removed),
 * at most @max into @names; their number, or -1 when the struct is not there.
 */
static int declared_members(const char *h, const char *rec, char names[][64], int max)
{
	char open[96];
	const char *p, *end;
	int n = 0;

	snprintf(open, sizeof(open), "struct %s {", rec);
	p = strstr(h, open);
	if (!p)
		return -1;
	p += strlen(open);
	end = strstr(p, "};");
	if (!end)
		return -1;
	/* each declaration: TYPE a, b[3], c; the names are the last word of each piece */
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *s = p;

		if (!semi)
			break;
		while (s < semi) {
			const char *comma = memchr(s, ',', (size_t)(semi - s));
			const char *pe = comma ? comma : semi, *ne, *nb;

			/* drop an array suffix, then take the identifier before it */
			ne = memchr(s, '[', (size_t)(pe - s));
			if (!ne)
				ne = pe;
			while (ne > s && isspace((unsigned char)ne[-1]))
				ne--;
			nb = ne;
			while (nb > s && (isalnum((unsigned char)nb[-1]) || nb[-1] == '_'))
				nb--;
			if (ne > nb && n < max)
				trim_copy(names[n++], 64, nb, ne);
			s = pe + 1;
		}
		p = semi + 1;
	}
	return n;
}

/* Remove C comments from @s in place (trace.h has no comment markers in strings). */
static void strip_comments(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (r[0] == '/' && r[1] == '*') {
			char *e = strstr(r + 2, "*/");
			r = e ? e + 2 : r + strlen(r);
			*w++ = ' ';
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
}

/* ---- tests ---- */

/* The spec's byte tables agree with the structs, and every record has one. */
static void test_spec_tables(void)
{
	struct doc_check c;
	char *doc = read_source("docs/report-format.md");

	if (!doc)
		return;
	doc_check_init(&c);
	check_doc(&c, doc);
	for (size_t i = 0; i < NRECORDS; i++)
		if (!c.seen[i])
			problem(&c, 0, "no section '%s (%s%zu bytes)' for struct %s", records[i].doc,
				records[i].type ? "type N, " : "", records[i].size, records[i].rec);
	if (c.nproblems)
		gstest_fail(__FILE__, __LINE__, "docs/report-format.md:\n%s", c.problems.buf);
	CHECK_EQ_U64(c.nproblems, 0);
	strbuf_release(&c.problems);
	free(doc);
}

/* Every entry type of the enum has a record in this test (and so a section). */
static void test_every_type_known(void)
{
	for (unsigned t = 1; t < TRACE_EV__COUNT; t++) {
		const char *name = trace_event_name(t);
		const struct fmt_record *r = name ? record_by_doc(name) : NULL;

		if (!r)
			gstest_fail(__FILE__, __LINE__, "entry type %u (%s) has no record in this test",
				    t, name ? name : "(no name)");
		else
			CHECK_EQ_U64(r->type, t);
	}
}

/* Every member trace.h declares is in the field table, and nothing else is. */
static void test_table_matches_header(void)
{
	char *h = read_source("src/trace/trace.h");
	char names[64][64];

	if (!h)
		return;
	strip_comments(h);
	for (size_t i = 0; i < NRECORDS; i++) {
		int n = declared_members(h, records[i].rec, names, 64), k;
		size_t in_table = 0;

		if (n <= 0) {
			gstest_fail(__FILE__, __LINE__, "struct %s not found in trace.h", records[i].rec);
			continue;
		}
		for (k = 0; k < n; k++)
			if (!field_of(records[i].rec, names[k]))
				gstest_fail(__FILE__, __LINE__, "%s.%s is declared in trace.h but not in "
					    "this test's field table", records[i].rec, names[k]);
		for (size_t f = 0; f < NFIELDS; f++)
			in_table += !strcmp(fields[f].rec, records[i].rec);
		CHECK_EQ_U64(in_table, n);
	}
	free(h);
}

/* Run the checker on one section; returns the problems (caller frees). */
static char *check_text(const char *text, int *nproblems)
{
	struct doc_check c;

	doc_check_init(&c);
	check_doc(&c, text);
	*nproblems = c.nproblems;
	if (!c.problems.buf)
		return xstrdup("");
	return c.problems.buf;
}

#define WARNING_HEAD "### warning (type 20, 16 bytes)\n\n| offset | size | field | meaning |\n|---|---|---|---|\n"

/* A right table passes; each kind of wrong row is caught with a message that names it. */
static void test_checker_catches(void)
{
	static const struct {
		const char *text, *expect;
	} cases[] = {
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n| 12 | 4 | message_id | w |\n", NULL },
		/* a wrong size */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 2 | pid | p |\n| 10 | 6 | message_id | w |\n",
		  "field 'pid' of size 2, sizeof says 4" },
		/* a wrong offset */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 4 | message_id | w |\n| 12 | 4 | pid | p |\n",
		  "field 'message_id' at offset 8, offsetof says 12" },
		/* a missing row leaves a gap and an undocumented field */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 12 | 4 | message_id | w |\n", "no row for field 'pid'" },
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 12 | 4 | message_id | w |\n", "a gap" },
		/* overlapping rows */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n| 8 | 4 | message_id | w |\n",
		  "an overlap" },
		/* a field the struct lacks */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n| 12 | 4 | tid | w |\n",
		  "struct trace_warning has no field 'tid'" },
		/* padding over a field */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n| 12 | 4 | (padding) | w |\n",
		  "covers field 'message_id'" },
		/* rows that stop short of the struct */
		{ WARNING_HEAD "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n", "the rows end at 12, the struct at 16" },
		/* a wrong type number and size in the heading */
		{ "### warning (type 18, 16 bytes)\n\n| offset | size | field | meaning |\n|---|---|---|---|\n"
		  "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n| 12 | 4 | message_id | w |\n",
		  "type 18 in the heading, trace_event_type_by_name says 20" },
		{ "### warning (type 20, 24 bytes)\n\n| offset | size | field | meaning |\n|---|---|---|---|\n"
		  "| 0 | 8 | time | t |\n| 8 | 4 | pid | p |\n| 12 | 4 | message_id | w |\n",
		  "24 bytes in the heading, sizeof(struct trace_warning) is 16" },
		/* arrays are written with their length */
		{ "### File header (64 bytes)\n\n| offset | size | field | meaning |\n|---|---|---|---|\n"
		  "| 0 | 8 | magic | m |\n| 8 | 2 | version | v |\n| 10 | 2 | min_reader | r |\n"
		  "| 12 | 4 | header_size | h |\n| 16 | 8 | features | f |\n| 24 | 8 | created_realtime_ns | c |\n"
		  "| 32 | 28 | reserved[28] | z |\n| 60 | 4 | header_crc | x |\n",
		  "field 'magic' is an array: write magic[8]" },
		/* an empty meaning */
		{ WARNING_HEAD "| 0 | 8 | time |  |\n| 8 | 4 | pid | p |\n| 12 | 4 | message_id | w |\n",
		  "row 'time' has no meaning" },
		/* a section for a record the test does not know */
		{ "### frobnicate (type 99, 8 bytes)\n", "names no record" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n;
		char *out = check_text(cases[i].text, &n);

		if (!cases[i].expect) {
			if (n)
				gstest_fail(__FILE__, __LINE__, "case %zu: unexpected problems:\n%s", i, out);
		} else if (!strstr(out, cases[i].expect)) {
			gstest_fail(__FILE__, __LINE__, "case %zu: expected \"%s\" among:\n%s", i,
				    cases[i].expect, out);
		}
		free(out);
	}
}

/*
 * The checker accepts, for every record, the table the field table itself
 * implies, with a "(padding)" row for every hole the compiler leaves (on
 * x86-64 and aarch64: the last 4 bytes of trace_kernel).
 */
static void test_padding_rows(void)
{
	for (size_t i = 0; i < NRECORDS; i++) {
		const struct fmt_record *r = &records[i];
		struct strbuf sb = STRBUF_INIT;
		size_t pos = 0;
		char *out;
		int n;

		if (r->type)
			strbuf_addf(&sb, "### %s (type %d, %zu bytes)\n", r->doc, r->type, r->size);
		else
			strbuf_addf(&sb, "## %s (%zu bytes)\n", r->doc, r->size);
		strbuf_addstr(&sb, "\n| offset | size | field | meaning |\n|---|---|---|---|\n");
		for (size_t k = 0; k < NFIELDS; k++) {
			const struct fmt_field *f = &fields[k];

			if (strcmp(f->rec, r->rec))
				continue;
			if (f->off > pos)
				strbuf_addf(&sb, "| %zu | %zu | (padding) | zero |\n", pos, f->off - pos);
			if (f->count)
				strbuf_addf(&sb, "| %zu | %zu | `%s[%zu]` | x |\n", f->off, f->size,
					    f->name, f->count);
			else
				strbuf_addf(&sb, "| %zu | %zu | %s | x |\n", f->off, f->size, f->name);
			pos = f->off + f->size;
		}
		if (r->size > pos)
			strbuf_addf(&sb, "| %zu | %zu | (padding) | zero |\n", pos, r->size - pos);
		out = check_text(sb.buf, &n);
		if (n)
			gstest_fail(__FILE__, __LINE__, "%s: unexpected problems:\n%s", r->doc, out);
		free(out);
		strbuf_release(&sb);
	}
}

static const struct gstest tests[] = {
	GSTEST(test_spec_tables),
	GSTEST(test_every_type_known),
	GSTEST(test_table_matches_header),
	GSTEST(test_checker_catches),
	GSTEST(test_padding_rows),
	{ 0 },
};

int main(int argc, char **argv)
{
	return gstest_main(argc, argv, tests);
}
