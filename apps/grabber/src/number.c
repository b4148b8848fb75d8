#include "number.h"

#include <errno.h>
#include <stdlib.h>

int parse_unsigned(const char *text, unsigned long min, unsigned long max,
		   unsigned long *value)
{
	char *end;

	/* strtoul would accept a sign or leading spaces. */
	if (text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	*value = strtoul(text, &end, 10);
	return (errno != 0 || *end != '\0' || *value < min || *value > max) ? -1 : 0;
}
