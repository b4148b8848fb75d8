/* Whole numbers from command lines, shared with bench/iomux. */
#ifndef GRABBER_NUMBER_H
#define GRABBER_NUMBER_H

/* Parses all of text as a decimal number in [min, max]; no sign, no
 * spaces, no trailing characters. Returns 0, or -1 when it is not one. */
int parse_unsigned(const char *text, unsigned long min, unsigned long max,
		   unsigned long *value);

#endif
