/* acme_ext.h: what libacme.so.1 exports besides acme.h, for acme's own
 * tools. acme.ini does not guard it: callguard's layer forwards it untouched
 * (`passthrough` in [api]), so the layer can stand in for the whole library. */
#ifndef ACME_EXT_H
#define ACME_EXT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library's build, e.g. "acme 1.0.0". */
const char *acmeGetBuildInfo(void);

#ifdef __cplusplus
}
#endif
#endif
