/*
 * stats_work.c - the work of one operator from its input shapes: FLOPs and
 * bytes (TraceLens's performance model is the anchor: FLOPs and bytes per
 * op, compared with the GPU's peaks).  docs/stats.md has the table of every
 * formula; this file and that table must say the same thing.
 *
 * Inputs are the model's compact-JSON argument lists (model.h, struct
 * model_op_shape): "[[2048,4096],[4096,1024],[],[]]" for the dims, the
 * same with strings for "Input type" and "Concrete Inputs".
 */
#include "stats_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define WORK_MAX_ARGS 32
#define WORK_MAX_RANK 8
#define WORK_STR 48

enum warg_kind {
	WA_NONE = 0,     /* missing, null or an element we cannot read */
	WA_DIMS,         /* a list of integers: a tensor's shape ("[]": a scalar or no tensor) */
	WA_NESTED,       /* a list of lists: a tensor list */
	WA_STR,          /* a string (types, concrete inputs) */
};

struct warg {
	enum warg_kind kind;
	int rank;
	int64_t d[WORK_MAX_RANK];
	char s[WORK_STR];
};

struct wargs {
	size_t n;
	struct warg v[WORK_MAX_ARGS];
};

/* ---- reading the compact JSON lists ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Skip one JSON value (balanced brackets, strings with escapes); returns the rest. */
static const char *skip_value(const char *p)
{
	int depth = 0;

	do {
		p = skip_ws(p);
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else if (*p == '[' || *p == '{') {
			depth++;
			p++;
		} else if (*p == ']' || *p == '}') {
			depth--;
			p++;
		} else if (*p == ',' && depth) {
			p++;
		} else {
			while (*p && *p != ',' && *p != ']' && *p != '}')
				p++;
		}
	} while (*p && depth > 0);
	return p;
}

static const char *read_string(const char *p, char *out, size_t n)
{
	size_t k = 0;

	for (p++; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			p++;
			c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'u' ? '?' : *p;
			if (*p == 'u')
				for (int i = 0; i < 4 && isxdigit((unsigned char)p[1]); i++)
					p++;
		}
		if (k + 1 < n)
			out[k++] = c;
	}
	out[k] = 0;
	return *p ? p + 1 : p;
}

/* An element that is a list: integers (a shape) or lists (a tensor list). */
static const char *read_list(const char *p, struct warg *a)
{
	const char *start = p;

	p = skip_ws(p + 1);
	if (*p == '[') {
		a->kind = WA_NESTED;
		return skip_value(start);
	}
	a->kind = WA_DIMS;
	a->rank = 0;
	while (*p && *p != ']') {
		char *end;
		long long v = strtoll(p, &end, 10);
		if (end == p || a->rank >= WORK_MAX_RANK) {
			a->kind = WA_NONE;
			return skip_value(start);
		}
		a->d[a->rank++] = v;
		p = skip_ws(end);
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	return *p ? p + 1 : p;
}

/* Parse the list @s into @out; a NULL, empty or malformed @s gives no elements. */
static void wargs_parse(const char *s, struct wargs *out)
{
	const char *p = s ? skip_ws(s) : "";

	out->n = 0;
	if (*p != '[')
		return;
	p = skip_ws(p + 1);
	while (*p && *p != ']' && out->n < WORK_MAX_ARGS) {
		struct warg *a = &out->v[out->n++];

		memset(a, 0, sizeof(*a));
		if (*p == '[') {
			p = read_list(p, a);
		} else if (*p == '"') {
			a->kind = WA_STR;
			p = read_string(p, a->s, sizeof(a->s));
		} else {
			p = skip_value(p);
		}
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != ']')
			break;
	}
}

static const struct warg *arg(const struct wargs *a, size_t i)
{
	return i < a->n ? &a->v[i] : NULL;
}

static const struct warg *tensor(const struct wargs *a, size_t i)
{
	const struct warg *x = arg(a, i);
	return x && x->kind == WA_DIMS ? x : NULL;
}

static double numel(const struct warg *t)
{
	double n = 1;

	for (int i = 0; i < t->rank; i++)
		n *= (double)(t->d[i] > 0 ? t->d[i] : 0);
	return n;
}

/* ---- element sizes ---- */

/* Bytes per element of a PyTorch dtype name as Kineto writes it; 0 when unknown. */
int stats_dtype_size(const char *t)
{
	static const struct { const char *name; int size; } sizes[] = {
		{ "float", 4 }, { "double", 8 }, { "c10::Half", 2 }, { "c10::BFloat16", 2 },
		{ "Half", 2 }, { "BFloat16", 2 }, { "long", 8 }, { "long int", 8 },
		{ "int64_t", 8 }, { "int", 4 }, { "short", 2 }, { "signed char", 1 },
		{ "unsigned char", 1 }, { "bool", 1 }, { "char", 1 },
		{ "c10::complex<float>", 8 }, { "c10::complex<double>", 16 },
		{ "c10::complex<c10::Half>", 4 },
		{ "c10::Float8_e4m3fn", 1 }, { "c10::Float8_e5m2", 1 },
		{ "c10::Float8_e4m3fnuz", 1 }, { "c10::Float8_e5m2fnuz", 1 },
		{ "c10::Float8_e8m0fnu", 1 },
	};

	for (size_t i = 0; t && i < ARRAY_SIZE(sizes); i++)
		if (!strcmp(t, sizes[i].name))
			return sizes[i].size;
	return 0;
}

/* The element size of input @i, 0 when its type was not recorded or is unknown. */
static int esize(const struct wargs *types, size_t i)
{
	const struct warg *t = arg(types, i);
	return t && t->kind == WA_STR ? stats_dtype_size(t->s) : 0;
}

/*
 * Bytes of the listed inputs and an output of @out_numel elements in the
 * dtype of input @out_like; 0 (unknown) when an element size is unknown.
 */
static double io_bytes(const struct wargs *dims, const struct wargs *types, const size_t *in,
		       size_t nin, double out_numel, size_t out_like)
{
	double b = 0;
	int es;

	for (size_t i = 0; i < nin; i++) {
		const struct warg *t = tensor(dims, in[i]);
		if (!t)
			continue;
		es = esize(types, in[i]);
		if (!es && t->rank == 0)
			continue;     /* "[]" of a non-tensor ("ScalarList", "" for None): no data */
		if (!es)
			return 0;
		b += numel(t) * es;
	}
	if (!(es = esize(types, out_like)))
		return 0;
	return b + out_numel * es;
}

/* ---- concrete inputs ---- */

/* The concrete value of input @i, or NULL when not recorded (absent or ""). */
static const char *concrete(const struct wargs *c, size_t i)
{
	const struct warg *x = arg(c, i);
	return x && x->kind == WA_STR && x->s[0] ? x->s : NULL;
}

/* "[2, 2]" or "2" into v (at most @max); returns the count, 0 when not a list of integers. */
static int int_list(const char *s, int64_t *v, int max)
{
	int n = 0;

	if (!s)
		return 0;
	s = skip_ws(s);
	if (*s == '[')
		s++;
	while (*s && *s != ']' && n < max) {
		char *end;
		long long x = strtoll(s, &end, 10);
		if (end == s)
			return 0;
		v[n++] = x;
		s = skip_ws(end);
		if (*s == ',')
			s = skip_ws(s + 1);
	}
	return n;
}

/* "True" / "False" -> 1 / 0, -1 when not recorded or not a boolean. */
static int boolean(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "True") || !strcmp(s, "true") || !strcmp(s, "1"))
		return 1;
	if (!strcmp(s, "False") || !strcmp(s, "false") || !strcmp(s, "0"))
		return 0;
	return -1;
}

/* ---- formulas ---- */

static int fail(struct stats_op_work *w, const char *why)
{
	w->note = why;
	return -1;
}

static void set_work(struct stats_op_work *w, double flops, double bytes)
{
	w->flops = flops;
	w->has_flops = 1;
	w->bytes = bytes;
	w->has_bytes = bytes > 0;
}

/* A matrix operand: rows, cols of a rank-2 shape. */
static int mat2(const struct warg *t, double *r, double *c)
{
	if (!t || t->rank != 2)
		return 0;
	*r = (double)t->d[0];
	*c = (double)t->d[1];
	return 1;
}

/* aten::mm (A, B), aten::addmm (bias, A, B): A (M x K), B (K x N). */
static int f_mm(const struct wargs *d, const struct wargs *ty, size_t a, int bias,
		struct stats_op_work *w)
{
	double M, K, K2, N;
	size_t in[3] = { a, a + 1, 0 };

	if (!mat2(tensor(d, a), &M, &K) || !mat2(tensor(d, a + 1), &K2, &N))
		return fail(w, "the matrices are not 2-D");
	if (K != K2)
		return fail(w, "the inner dimensions differ");
	set_work(w, 2 * M * N * K + (bias ? M * N : 0),
		 io_bytes(d, ty, in, bias ? 3 : 2, M * N, a));
	return 1;
}

/* aten::bmm (A, B), aten::baddbmm (bias, A, B): A (B x M x K), B (B x K x N). */
static int f_bmm(const struct wargs *d, const struct wargs *ty, size_t a, int bias,
		 struct stats_op_work *w)
{
	const struct warg *x = tensor(d, a), *y = tensor(d, a + 1);
	double B, M, K, N;
	size_t in[3] = { a, a + 1, 0 };

	if (!x || !y || x->rank != 3 || y->rank != 3)
		return fail(w, "the batches of matrices are not 3-D");
	if (x->d[0] != y->d[0] || x->d[2] != y->d[1])
		return fail(w, "the batch or inner dimensions differ");
	B = (double)x->d[0];
	M = (double)x->d[1];
	K = (double)x->d[2];
	N = (double)y->d[2];
	set_work(w, 2 * B * M * N * K + (bias ? B * M * N : 0),
		 io_bytes(d, ty, in, bias ? 3 : 2, B * M * N, a));
	return 1;
}

/* aten::linear (input (... x K), weight (N x K), bias): 2 * prod(leading) * N * K. */
static int f_linear(const struct wargs *d, const struct wargs *ty, struct stats_op_work *w)
{
	const struct warg *x = tensor(d, 0), *wt = tensor(d, 1);
	double L = 1, N, K;
	size_t in[3] = { 0, 1, 2 };

	if (!x || !wt || x->rank < 1 || wt->rank != 2)
		return fail(w, "the input or weight shape does not fit a linear layer");
	if (x->d[x->rank - 1] != wt->d[1])
		return fail(w, "the input's last dimension is not the weight's");
	for (int i = 0; i + 1 < x->rank; i++)
		L *= (double)x->d[i];
	N = (double)wt->d[0];
	K = (double)wt->d[1];
	set_work(w, 2 * L * N * K, io_bytes(d, ty, in, 3, L * N, 0));
	return 1;
}

/*
 * aten::matmul by torch.matmul's rule: 1-D operands are a row (left) or a
 * column (right) vector; leading (batch) dimensions broadcast.
 */
static int f_matmul(const struct wargs *d, const struct wargs *ty, struct stats_op_work *w)
{
	const struct warg *x = tensor(d, 0), *y = tensor(d, 1);
	double M, K, K2, N, batch = 1;
	int bx, by, nb;
	size_t in[2] = { 0, 1 };

	if (!x || !y || x->rank < 1 || y->rank < 1)
		return fail(w, "an operand is not a tensor");
	M = x->rank == 1 ? 1 : (double)x->d[x->rank - 2];
	K = (double)x->d[x->rank - 1];
	K2 = y->rank == 1 ? (double)y->d[0] : (double)y->d[y->rank - 2];
	N = y->rank == 1 ? 1 : (double)y->d[y->rank - 1];
	if (K != K2)
		return fail(w, "the inner dimensions differ");
	bx = x->rank > 2 ? x->rank - 2 : 0;
	by = y->rank > 2 ? y->rank - 2 : 0;
	nb = bx > by ? bx : by;
	for (int i = 0; i < nb; i++) {
		/* align from the right, as broadcasting does */
		int64_t a = i < nb - bx ? 1 : x->d[i - (nb - bx)];
		int64_t b = i < nb - by ? 1 : y->d[i - (nb - by)];
		if (a != b && a != 1 && b != 1)
			return fail(w, "the batch dimensions do not broadcast");
		batch *= (double)(a > b ? a : b);
	}
	set_work(w, 2 * batch * M * N * K, io_bytes(d, ty, in, 2, batch * M * N, 0));
	return 1;
}

/* Where a convolution op keeps its scalar arguments (-1: not an argument of it). */
struct conv_args {
	const char *op;
	int stride, padding, dilation, transposed;
};

static const struct conv_args conv_ops[] = {
	{ "aten::conv1d", 3, 4, 5, -1 },
	{ "aten::conv2d", 3, 4, 5, -1 },
	{ "aten::conv3d", 3, 4, 5, -1 },
	{ "aten::convolution", 3, 4, 5, 6 },
	{ "aten::_convolution", 3, 4, 5, 6 },
	{ "aten::cudnn_convolution", 3, 2, 4, -1 },   /* (self, weight, padding, stride, dilation, groups, ...) */
	{ "aten::miopen_convolution", 4, 3, 5, -1 },  /* (self, weight, bias, padding, stride, dilation, groups, ...) */
};

/*
 * Convolution: input (N, C_in, spatial...), weight (C_out, C_in/groups,
 * kernel...); FLOPs 2 * N * C_out * (C_in/groups) * prod(kernel) *
 * prod(output spatial), output_i = floor((in_i + 2 pad_i - dil_i (k_i - 1)
 * - 1) / stride_i) + 1.  Scalars not recorded: stride 1, padding 0,
 * dilation 1 (PyTorch's defaults), said in w->note.
 */
static int f_conv(const struct conv_args *ca, const struct wargs *d, const struct wargs *ty,
		  const struct wargs *c, struct stats_op_work *w)
{
	const struct warg *x = tensor(d, 0), *wt = tensor(d, 1), *b = tensor(d, 2);
	int64_t st[3] = { 1, 1, 1 }, pad[3] = { 0, 0, 0 }, dil[3] = { 1, 1, 1 }, v[3];
	double flops, out = 1, N, Co, Cig, kernel = 1;
	int sp, n, assumed = 0, same = 0;
	const char *ps;
	size_t in[3] = { 0, 1, 2 };

	if (!x || !wt || x->rank < 3 || x->rank > 5 || wt->rank != x->rank)
		return fail(w, "the input and weight are not 3-D to 5-D tensors of one rank");
	sp = x->rank - 2;
	if (ca->transposed >= 0 && boolean(concrete(c, (size_t)ca->transposed)) == 1)
		return fail(w, "a transposed convolution (no formula here)");
#define SCALARS(idx, arr)                                                         \
	do {                                                                        \
		if ((n = int_list(concrete(c, (size_t)(idx)), v, 3)) == 1)          \
			for (int i_ = 0; i_ < sp; i_++)                             \
				arr[i_] = v[0];                                     \
		else if (n == sp)                                                   \
			memcpy(arr, v, sizeof(v[0]) * (size_t)sp);                  \
		else                                                                \
			assumed = 1;                                                \
	} while (0)
	SCALARS(ca->stride, st);
	ps = concrete(c, (size_t)ca->padding);
	if (ps && !strcmp(ps, "same"))
		same = 1;             /* output size = input size (PyTorch allows it with stride 1) */
	else if (ps && !strcmp(ps, "valid"))
		;                     /* no padding */
	else
		SCALARS(ca->padding, pad);
	SCALARS(ca->dilation, dil);
#undef SCALARS
	N = (double)x->d[0];
	Co = (double)wt->d[0];
	Cig = (double)wt->d[1];
	for (int i = 0; i < sp; i++) {
		int64_t k = wt->d[2 + i], o;
		if (st[i] <= 0)
			return fail(w, "a stride is not positive");
		o = same ? x->d[2 + i] : (x->d[2 + i] + 2 * pad[i] - dil[i] * (k - 1) - 1) / st[i] + 1;
		if (o <= 0)
			return fail(w, "the output would be empty");
		kernel *= (double)k;
		out *= (double)o;
	}
	flops = 2 * N * Co * Cig * kernel * out;
	set_work(w, flops, io_bytes(d, ty, in, b ? 3 : 2, N * Co * out, 0));
	if (assumed)
		w->note = "stride 1, padding 0, dilation 1 assumed (not recorded)";
	return 1;
}

/* Where an attention op keeps is_causal, and its layout. */
struct attn_args {
	const char *op;
	int causal;                /* index of is_causal (or custom_mask_type) */
	int bshd;                  /* q is (B, S, H, D), not (B, H, S, D) */
	int mask_type;             /* the argument is custom_mask_type (0 none, else causal) */
};

static const struct attn_args attn_ops[] = {
	{ "aten::scaled_dot_product_attention", 5, 0, 0 },
	{ "aten::_scaled_dot_product_flash_attention", 4, 0, 0 },
	{ "aten::_scaled_dot_product_efficient_attention", 6, 0, 0 },
	{ "aten::_scaled_dot_product_cudnn_attention", 6, 0, 0 },
	{ "aten::_flash_attention_forward", 8, 1, 0 },
	{ "aten::_efficient_attention_forward", 9, 1, 1 },
};

/*
 * Attention forward: q (B, H, S_q, D), k (B, H_kv, S_k, D), v (B, H_kv,
 * S_k, D_v): FLOPs 2 * B * H * S_q * S_k * (D + D_v) (QK^T and PV; 4 B H S_q
 * S_k D when D_v = D), halved when is_causal is recorded as true.
 */
static int f_attn(const struct attn_args *aa, const struct wargs *d, const struct wargs *ty,
		  const struct wargs *c, struct stats_op_work *w)
{
	const struct warg *q = tensor(d, 0), *k = tensor(d, 1), *v = tensor(d, 2);
	double B, H, Sq, Sk, D, Dv, flops;
	const char *cs = concrete(c, (size_t)aa->causal);
	int causal;
	size_t in[3] = { 0, 1, 2 };

	if (!q || !k || !v || q->rank != 4 || k->rank != 4 || v->rank != 4)
		return fail(w, aa->bshd && q && q->rank == 3 ?
			    "a variable-length batch (cumulative sequence lengths are not recorded)" :
			    "q, k and v are not 4-D");
	B = (double)q->d[0];
	H = (double)q->d[aa->bshd ? 2 : 1];
	Sq = (double)q->d[aa->bshd ? 1 : 2];
	Sk = (double)k->d[aa->bshd ? 1 : 2];
	D = (double)q->d[3];
	Dv = (double)v->d[3];
	if (k->d[3] != q->d[3])
		return fail(w, "q and k head dimensions differ");
	if (aa->mask_type) {
		int64_t t;
		causal = int_list(cs, &t, 1) == 1 ? t != 0 : -1;
	} else {
		causal = boolean(cs);
	}
	flops = 2 * B * H * Sq * Sk * (D + Dv);
	if (causal == 1)
		flops *= 0.5;
	set_work(w, flops, io_bytes(d, ty, in, 3, B * H * Sq * Dv, 0));
	if (causal < 0)
		w->note = "not causal assumed (is_causal not recorded)";
	return 1;
}

/* aten::copy_ (self, src): reads src, writes self. */
static int f_copy(const struct wargs *d, const struct wargs *ty, struct stats_op_work *w)
{
	const struct warg *dst = tensor(d, 0), *src = tensor(d, 1);
	int e0 = esize(ty, 0), e1 = esize(ty, 1);

	if (!dst || !src)
		return fail(w, "the operands are not tensors");
	if (!e0 || !e1)
		return fail(w, "an element type is unknown");
	w->bytes = numel(dst) * e0 + numel(src) * e1;
	w->has_bytes = w->bytes > 0;
	return 1;
}

int stats_op_work(const char *op, const char *dims, const char *types, const char *conc,
		  struct stats_op_work *w)
{
	struct wargs *a = xmalloc(3 * sizeof(*a)), *d = &a[0], *ty = &a[1], *c = &a[2];
	int ret = 0;

	memset(w, 0, sizeof(*w));
	w->matmul = 1;
	wargs_parse(dims, d);
	wargs_parse(types, ty);
	wargs_parse(conc, c);
	if (!op) {
		ret = 0;
	} else if (!strcmp(op, "aten::mm")) {
		ret = f_mm(d, ty, 0, 0, w);
	} else if (!strcmp(op, "aten::addmm")) {
		ret = f_mm(d, ty, 1, 1, w);
	} else if (!strcmp(op, "aten::bmm")) {
		ret = f_bmm(d, ty, 0, 0, w);
	} else if (!strcmp(op, "aten::baddbmm")) {
		ret = f_bmm(d, ty, 1, 1, w);
	} else if (!strcmp(op, "aten::linear")) {
		ret = f_linear(d, ty, w);
	} else if (!strcmp(op, "aten::matmul")) {
		ret = f_matmul(d, ty, w);
	} else if (!strcmp(op, "aten::copy_")) {
		w->matmul = 0;
		ret = f_copy(d, ty, w);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(conv_ops) && !ret; i++)
			if (!strcmp(op, conv_ops[i].op))
				ret = f_conv(&conv_ops[i], d, ty, c, w);
		for (size_t i = 0; i < ARRAY_SIZE(attn_ops) && !ret; i++)
			if (!strcmp(op, attn_ops[i].op))
				ret = f_attn(&attn_ops[i], d, ty, c, w);
	}
	if (ret <= 0) {
		w->has_flops = w->has_bytes = 0;
		if (!ret)
			w->matmul = 0;
	}
	free(a);
	return ret;
}
