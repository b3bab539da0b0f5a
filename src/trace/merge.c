/*
 * merge.c - several reports (or a profile's per-process parts) into one.
 *
 * The merged report is written to a temporary beside @out and renamed (or
 * linked, under @excl) into place only when it is whole, so a full disk, a
 * file-size limit or a damaged input never leaves a short or empty report
 * at @out: a 0-byte report there would make the next run refuse with
 * "already exists".
 */
#include "trace.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Streams per input: the loader's own cap (model.c), past it a stream id is damage. */
#define MERGE_MAX_STREAMS (1u << 20)

/* Put the whole temporary @tmp at @out; under @excl never replace an existing @out. */
static int publish(const char *tmp, const char *out, int excl)
{
	if (!excl) {
		if (rename(tmp, out) < 0)
			return error("cannot write '%s': %s", out, strerror(errno));
		return 0;
	}
	/* link() fails when @out exists: no window in which another writer's report is replaced */
	if (link(tmp, out) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno == EEXIST)
		return error("report '%s' already exists (use --force to overwrite)", out);
	/* a file system without hard links: check, then rename */
	if (!access(out, F_OK))
		return error("report '%s' already exists (use --force to overwrite)", out);
	if (rename(tmp, out) < 0)
		return error("cannot write '%s': %s", out, strerror(errno));
	return 0;
}

int trace_merge(const char *out, const char *const *inputs, size_t n, int excl)
{
	struct trace_writer w;
	uint32_t next_stream = 0;
	char *tmp;
	int fd;

	if (excl && !access(out, F_OK))
		return error("report '%s' already exists (use --force to overwrite)", out);
	tmp = xstrfmt("%s.tmp-%ld", out, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		/* named as the output: the temporary is ours, the directory the user's */
		error("cannot create '%s': %s", out, strerror(errno));
		free(tmp);
		return -1;
	}
	/* errors name @out, the file the user asked for */
	if (trace_writer_fdopen(&w, fd, out, 1) < 0) {
		unlink(tmp);
		free(tmp);
		return -1;
	}
	w.indexed = 1; /* the merged report ends with its chunk index */
	for (size_t i = 0; i < n; i++) {
		struct trace_reader r;
		struct trace_chunk c;
		uint32_t *map = NULL, base = next_stream, max_seen = 0;
		size_t map_n = 0;
		int ret;

		if (trace_reader_open(&r, inputs[i]) < 0)
			goto fail;
		while ((ret = trace_reader_next(&r, &c)) > 0) {
			struct trace_chunk_header h = c.hdr;
			uint32_t s = h.stream;
			/* streams are renumbered densely in order of first appearance */
			if (s >= map_n) {
				/* in size_t: s + 1 in 32 bits wraps to 0 for stream 0xFFFFFFFF */
				size_t nn = (size_t)s + 1;
				if (nn > MERGE_MAX_STREAMS) {
					warning("report '%s': stream id %u out of range, chunk skipped",
						inputs[i], s);
					continue;
				}
				map = xrealloc(map, nn * sizeof(*map));
				memset(map + map_n, 0xff, (nn - map_n) * sizeof(*map));
				map_n = nn;
			}
			if (map[s] == UINT32_MAX) {
				if ((uint64_t)base + max_seen >= UINT32_MAX) {
					free(map);
					trace_reader_close(&r);
					error("cannot merge '%s': more than %u streams in all", inputs[i],
					      UINT32_MAX - 1);
					goto fail;
				}
				map[s] = base + max_seen++;
			}
			/* re-encode from the raw payload: the reader already verified it */
			if (trace_writer_chunk(&w, h.type, map[s], c.data, c.len,
					       h.type == TRACE_CHUNK_EVENTS) < 0) {
				free(map);
				trace_reader_close(&r);
				goto fail;
			}
		}
		if (r.truncated || r.chunks_bad)
			warning("report '%s' is damaged (%s); merged its whole chunks", inputs[i],
				r.first_problem);
		free(map);
		trace_reader_close(&r);
		if (ret < 0)
			goto fail;
		next_stream = base + max_seen;
	}
	if (trace_writer_index(&w) < 0) {
		trace_writer_close(&w, 0);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (trace_writer_close(&w, 1) < 0 || publish(tmp, out, excl) < 0) {
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
fail:
	trace_writer_close(&w, 0);
	unlink(tmp);
	free(tmp);
	return -1;
}
