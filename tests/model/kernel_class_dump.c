/* kernel_class_dump - print "name<TAB>op<TAB>library<TAB>precision<TAB>tensor_cores" for each name on stdin. */
#include "model/kernel_class.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	static char line[1 << 16];

	while (fgets(line, sizeof(line), stdin)) {
		struct kernel_info ki;
		char *tab = strchr(line, '\t');
		line[strcspn(line, "\n")] = 0;
		if (tab)
			*tab = 0;
		if (line[0] == '#')
			continue;
		kernel_classify(line, NULL, &ki);
		printf("%s\t%s\t%s\t%s\t%s\n", line, kernel_op_name(ki.op), kernel_lib_name(ki.lib),
		       kernel_prec_name(ki.prec), kernel_tc_name(ki.tc));
	}
	return 0;
}
