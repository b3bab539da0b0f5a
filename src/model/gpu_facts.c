/*
 * gpu_facts.c - the GPU datasheet table (see gpu_facts.h; docs/gpus.md
 * cites the datasheet of every row).
 *
 * Throughputs are peak dense (no structured sparsity) TFLOP/s at boost
 * clock: where a datasheet prints only sparse figures (marked "*"), the
 * row holds half of them.  BF16 is the tensor-core rate with FP32
 * accumulation (GeForce parts run it at half their FP16-accumulate rate);
 * on GPUs without BF16 (V100, Turing) the column holds FP16.  -1 = not in
 * the datasheet (unknown), 0 = the GPU has no such unit.  Memory "GB" are
 * the datasheets' nominal sizes, which are binary (HBM and GDDR come in
 * 2^30-byte multiples).  docs/gpus.md cites the document of every row.
 */
#include "gpu_facts.h"

#include "util/util.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#define U (-1.0)

struct gpu_row {
	const char *name;
	const char *words;  /* space-separated lower-case words that must all be in the device name */
	uint32_t cc_major, cc_minor;
	double f[GF__N];    /* sms, fp32, tf32, bf16, fp8, mem GB, mem GB/s, nvlink GB/s, host link GB/s */
};

static const struct gpu_row gpu_rows[] = {
	/* NVIDIA data centre */
	{ "V100 SXM2 16GB", "v100", 7, 0, { 80, 15.7, 0, 125, 0, 16, 900, 300, 32 } },
	{ "V100 SXM2 32GB", "v100", 7, 0, { 80, 15.7, 0, 125, 0, 32, 900, 300, 32 } },
	{ "V100 PCIe 16GB", "v100 pcie", 7, 0, { 80, 14, 0, 112, 0, 16, 900, 0, 32 } },
	{ "V100 PCIe 32GB", "v100 pcie", 7, 0, { 80, 14, 0, 112, 0, 32, 900, 0, 32 } },
	{ "A100 SXM4 40GB", "a100", 8, 0, { 108, 19.5, 156, 312, 0, 40, 1555, 600, 64 } },
	{ "A100 SXM4 80GB", "a100", 8, 0, { 108, 19.5, 156, 312, 0, 80, 2039, 600, 64 } },
	{ "A100 PCIe 40GB", "a100 pcie", 8, 0, { 108, 19.5, 156, 312, 0, 40, 1555, 600, 64 } },
	{ "A100 PCIe 80GB", "a100 pcie", 8, 0, { 108, 19.5, 156, 312, 0, 80, 1935, 600, 64 } },
	{ "A10", "a10", 8, 6, { 72, 31.2, 62.5, 125, 0, 24, 600, 0, 64 } },
	{ "A30", "a30", 8, 0, { 56, 10.3, 82, 165, 0, 24, 933, 200, 64 } },
	{ "L4", "l4", 8, 9, { 58, 30.3, 60, 121, 242.5, 24, 300, 0, 64 } },
	{ "L40S", "l40s", 8, 9, { 142, 91.6, 183, 362.05, 733, 48, 864, 0, 64 } },
	{ "H100 SXM", "h100", 9, 0, { 132, 67, 494.5, 989.5, 1979, 80, 3350, 900, 128 } },
	{ "H100 PCIe", "h100 pcie", 9, 0, { 114, 51, 378, 756.5, 1513, 80, 2000, 600, 128 } },
	{ "H100 NVL", "h100 nvl", 9, 0, { 132, 60, 417.5, 835.5, 1670.5, 94, 3900, 600, 128 } },
	{ "H200", "h200", 9, 0, { 132, 67, 494.5, 989.5, 1979, 141, 4800, 900, 128 } },
	{ "H200 NVL", "h200 nvl", 9, 0, { U, 60, 417.5, 835.5, 1670.5, 141, 4800, 900, 128 } },
	{ "H800", "h800 !pcie", 9, 0, { 132, 67, 494.5, 989.5, 1979, 80, 3350, 400, 128 } },
	{ "GH200 96GB", "gh200", 9, 0, { 132, 67, 494.5, 989.5, 1979, 96, 4000, 900, 900 } },
	{ "GH200 144GB", "gh200", 9, 0, { 132, 67, 494.5, 989.5, 1979, 144, 4900, 900, 900 } },
	{ "B200", "b200", 10, 0, { 148, 75, 1100, 2250, 4500, 180, 7700, 1800, 128 } },
	{ "GB200", "gb200", 10, 0, { U, 80, 1250, 2500, 5000, 186, 8000, 1800, U } },
	/* NVIDIA GeForce ("!ti", "!d": the Ti / D variants are other GPUs) */
	{ "RTX 2080 Ti", "2080 ti", 7, 5, { 68, 13.4, 0, 53.8, 0, 11, 616, 100, 32 } },
	{ "RTX 3090", "3090 !ti", 8, 6, { 82, 35.6, 35.6, 71, 0, 24, 936, 112.5, 64 } },
	{ "RTX 4070 SUPER", "4070 super !ti", 8, 9, { 56, 35.5, U, U, U, 12, 504, 0, 64 } },
	{ "RTX 4090", "4090 !d", 8, 9, { 128, 82.6, 82.6, 165.2, 330.3, 24, 1008, 0, 64 } },
	{ "RTX 5090", "5090 !d", 12, 0, { 170, 104.8, 104.8, 209.5, 419, 32, 1792, 0, 128 } },
	/*
	 * AMD Instinct (compute units; "tf32" = FP32 matrix on MI200, TF32 on
	 * MI300).  MI250/MI250X are two dies that the runtime shows as two
	 * devices; the row is the whole module, as the datasheet gives it.
	 */
	{ "MI250X", "mi250x", 9, 0, { 220, 47.9, 95.7, 383, 0, 128, 3276.8, 800, 64 } },
	{ "MI250", "mi250", 9, 0, { 208, 45.3, 90.5, 362.1, 0, 128, 3276.8, 600, 64 } },
	{ "MI300X", "mi300x", 9, 4, { 304, 163.4, 653.7, 1307.4, 2614.9, 192, 5300, 896, 128 } },
	{ "MI325X", "mi325x", 9, 4, { 304, 163.4, 653.7, 1307.4, 2614.9, 256, 6000, 896, 128 } },
};

size_t gpu_table_size(void)
{
	return ARRAY_SIZE(gpu_rows);
}

const char *gpu_table_name(size_t i)
{
	return i < ARRAY_SIZE(gpu_rows) ? gpu_rows[i].name : NULL;
}

/* Is @word one of the words of @name (split at non-alphanumerics, lower-cased)? */
static int has_word(const char *name, const char *word, size_t wn)
{
	const char *p = name;

	while (*p) {
		size_t n = 0;
		while (*p && !isalnum((unsigned char)*p))
			p++;
		while (isalnum((unsigned char)p[n]))
			n++;
		if (n == wn) {
			size_t i;
			for (i = 0; i < n && tolower((unsigned char)p[i]) == word[i]; i++)
				;
			if (i == n)
				return 1;
		}
		p += n;
	}
	return 0;
}

/*
 * Number of words of @r when all are in @name and none of its "!word"
 * exclusions is, else 0.
 */
static int row_match(const struct gpu_row *r, const char *name)
{
	const char *w = r->words;
	int n = 0;

	while (*w) {
		int neg = *w == '!';
		size_t len;
		w += neg;
		len = strcspn(w, " ");
		if (has_word(name, w, len) == neg)
			return 0;
		n += !neg;
		w += len;
		while (*w == ' ')
			w++;
	}
	return n;
}

/*
 * Recorded memory is the usable size, a little below the datasheet's
 * nominal one (80 GB H100: 79.2 GiB; 141 GB H200: 139.8 GiB; 192 GB MI300X:
 * 192.0 GiB; 11 GB RTX 2080 Ti: 10.8 GiB: 0-4% below in every trace we
 * have).  A row's size fits a recorded one within 10%: wide enough for
 * that reserve, narrow enough to tell apart the closest variants in the
 * table (H100 SXM 80 GB / NVL 94 GB differ by 17%).
 */
#define MEM_FIT 0.10

static int mem_fits(const struct gpu_row *r, double gib)
{
	return fabs(r->f[GF_MEM_GB] - gib) <= MEM_FIT * r->f[GF_MEM_GB];
}

int gpu_facts_lookup(const char *name, uint32_t cc_major, uint32_t cc_minor, uint32_t sms, uint64_t mem_bytes,
		     struct gpu_facts *out)
{
	const struct gpu_row *cand[ARRAY_SIZE(gpu_rows)];
	size_t nc = 0;
	int best = 0, by_name;
	double gib = (double)mem_bytes / GPU_GB;

	memset(out, 0, sizeof(*out));
	if (name && *name) {
		for (size_t i = 0; i < ARRAY_SIZE(gpu_rows); i++) {
			int n = row_match(&gpu_rows[i], name);
			if (n > best) {
				best = n;
				nc = 0;
			}
			if (n && n == best)
				cand[nc++] = &gpu_rows[i];
		}
	}
	by_name = nc > 0;
	if (!nc && cc_major && sms) {
		for (size_t i = 0; i < ARRAY_SIZE(gpu_rows); i++)
			if (gpu_rows[i].cc_major == cc_major && gpu_rows[i].cc_minor == cc_minor &&
			    gpu_rows[i].f[GF_SMS] == (double)sms)
				cand[nc++] = &gpu_rows[i];
	}
	if (nc && mem_bytes && (nc > 1 || !by_name)) {
		/*
		 * Variants that differ by memory (A100 40/80 GB): keep the rows
		 * whose size fits the recorded one.  Matched by name, a size
		 * that fits none (a MIG slice) keeps them all; matched only by
		 * compute capability and SMs, it rules every row out.
		 */
		size_t k = 0;
		for (size_t i = 0; i < nc; i++)
			if (mem_fits(cand[i], gib))
				cand[k++] = cand[i];
		if (k || !by_name)
			nc = k;
	}
	for (int f = 0; f < GF__N && nc; f++) {
		double v = cand[0]->f[f];
		int agree = v >= 0;
		for (size_t i = 1; i < nc && agree; i++)
			agree = cand[i]->f[f] == v;
		if (agree) {
			out->f[f].v = v;
			out->f[f].src = GFS_TABLE;
		}
	}
	if (nc) {
		int agree = 1;
		for (size_t i = 1; i < nc; i++)
			agree &= cand[i]->cc_major == cand[0]->cc_major && cand[i]->cc_minor == cand[0]->cc_minor;
		if (agree) {
			out->cc_major = cand[0]->cc_major;
			out->cc_minor = cand[0]->cc_minor;
			out->cc_src = GFS_TABLE;
		}
	}
	if (nc == 1) /* several candidates: no single model name */
		out->model = cand[0]->name;
	if (cc_major) {
		out->cc_major = cc_major;
		out->cc_minor = cc_minor;
		out->cc_src = GFS_RECORDED;
	}
	if (sms) {
		out->f[GF_SMS].v = sms;
		out->f[GF_SMS].src = GFS_RECORDED;
	}
	if (mem_bytes) {
		out->f[GF_MEM_GB].v = gib;
		out->f[GF_MEM_GB].src = GFS_RECORDED;
	}
	return nc ? 0 : -1;
}

const char *gpu_fact_name(enum gpu_fact f)
{
	static const char *const n[GF__N] = {
		"sms", "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp8_tflops", "memory_gb", "memory_gbps",
		"nvlink_gbps", "host_link_gbps",
	};
	return (unsigned)f < GF__N ? n[f] : "?";
}

const char *gpu_fact_unit(enum gpu_fact f)
{
	static const char *const u[GF__N] = { "", "TFLOP/s", "TFLOP/s", "TFLOP/s", "TFLOP/s", "GB", "GB/s", "GB/s", "GB/s" };
	return (unsigned)f < GF__N ? u[f] : "";
}

const char *gpu_fact_src_name(enum gpu_fact_src s)
{
	return s == GFS_RECORDED ? "recorded" : s == GFS_TABLE ? "table" : "unknown";
}

char *gpu_fact_fmt(char *buf, size_t n, const struct gpu_fact_val *v)
{
	if (!v || v->src == GFS_UNKNOWN)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%g", v->v);
	return buf;
}
