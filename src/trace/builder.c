/*
 * builder.c - write a report from ordinary (non-injected) code.
 */
#include "trace.h"
#include "../util/util.h"

#include <stdlib.h>
#include <string.h>

#define BUILDER_CHUNK (1u << 20)

int trace_builder_open(struct trace_builder *b, const char *path, int excl, uint32_t stream)
{
	memset(b, 0, sizeof(*b));
	b->stream = stream;
	b->strings = xmalloc(sizeof(struct strtab));
	strtab_init(b->strings);
	if (trace_writer_open(&b->w, path, excl) < 0) {
		strtab_release(b->strings);
		free(b->strings);
		b->strings = NULL;
		return -1;
	}
	b->w.indexed = 1; /* the chunk index goes last (trace_builder_close) */
	return 0;
}

uint32_t trace_builder_str(struct trace_builder *b, const char *s)
{
	struct strtab *t = b->strings;
	uint32_t before = t->nr, id;

	if (!s || !*s)
		return 0;
	id = strtab_intern(t, s);
	if (t->nr != before)
		trace_buf_add_string(&b->buf, id, s, strlen(s));
	return id;
}

int trace_builder_flush(struct trace_builder *b)
{
	if (!b->buf.len || b->failed)
		return b->failed ? -1 : 0;
	if (trace_writer_chunk(&b->w, TRACE_CHUNK_EVENTS, b->stream, b->buf.data, b->buf.len, 1) < 0)
		b->failed = 1;
	b->buf.len = 0;
	return b->failed ? -1 : 0;
}

void trace_builder_add(struct trace_builder *b, unsigned type, const void *rec, size_t size)
{
	trace_buf_add(&b->buf, type, rec, size);
	if (b->buf.len >= BUILDER_CHUNK)
		trace_builder_flush(b);
}

int trace_builder_close(struct trace_builder *b, int crashed)
{
	int ret = trace_builder_flush(b);

	if (!crashed && !ret &&
	    trace_writer_chunk(&b->w, TRACE_CHUNK_STREAM_END, b->stream, "", 0, 0) < 0)
		ret = -1;
	/* a crashed writer writes no index, as a crashed collector does not */
	if (!crashed && !ret && trace_writer_index(&b->w) < 0)
		ret = -1;
	if (trace_writer_close(&b->w, 0) < 0)
		ret = -1;
	trace_buf_release(&b->buf);
	if (b->strings) {
		strtab_release(b->strings);
		free(b->strings);
	}
	b->strings = NULL;
	return ret;
}
