/*
 * merge.c - several reports (or a profile's per-process parts) into one.
 */
#include "trace.h"
#include "../util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int trace_merge(const char *out, const char *const *inputs, size_t n, int excl)
{
	struct trace_writer w;
	uint32_t next_stream = 0;

	if (trace_writer_open(&w, out, excl) < 0)
		return -1;
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
				size_t nn = s + 1;
				if (nn > (1u << 20)) {
					warning("report '%s': stream id %u out of range, chunk skipped",
						inputs[i], s);
					continue;
				}
				map = xrealloc(map, nn * sizeof(*map));
				memset(map + map_n, 0xff, (nn - map_n) * sizeof(*map));
				map_n = nn;
			}
			if (map[s] == UINT32_MAX) {
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
	return trace_writer_close(&w, 1);
fail:
	trace_writer_close(&w, 0);
	unlink(out);
	return -1;
}
