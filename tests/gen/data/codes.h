/* codes.h: an API whose success is not 0, so that a failure can have the
 * int value 0 (tests/gen/generates.sh, gen_both_paths_give_the_runtime_the_same_codes). */
#ifndef CODES_H
#define CODES_H

typedef enum cd_result { CD_OK = 7, CD_ERROR_ZERO = 0, CD_ERROR = -3, CD_MISSING = -9 } cd_result_t;

/* Returns `r`. */
cd_result_t cdReturn(cd_result_t r);
/* Returns `x`: no result code, never an error. */
int cdCount(int x);

#endif
