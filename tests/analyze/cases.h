/*
 * cases.h - the synthetic pathology reports of the analyze tests: each case
 * writes a broken report (the pathology with a known answer) or its fixed
 * twin through the real writer.  Case names follow the zoo's (zoo_map.h).
 */
#ifndef GS_TEST_CASES_H
#define GS_TEST_CASES_H

struct synth_case {
	const char *name;
	const char *finding;       /* the id the broken report's top finding must have */
	double gain;               /* the known answer (fraction of wall) */
	int (*write)(const char *path, int fixed);
};

extern const struct synth_case synth_cases[];

#endif
