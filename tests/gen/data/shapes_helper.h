/* shapes_helper.h: a header the API header includes. Its functions share the
 * API's prefix but are not the API's: the generator must not pick them. */
#ifndef SHAPES_HELPER_H
#define SHAPES_HELPER_H
int shHelperNotApi(int x);
#endif
