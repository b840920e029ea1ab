/* broken.h: a header with a syntax error on line 4. */
typedef int br_int;
br_int brFine(br_int x);
br_int brBroken(br_int x;
