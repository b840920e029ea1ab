/* variants.h: a header whose variants name a parameter otherwise, as
 * cuda.h's cuGraphLaunch (hGraph) and cuGraphLaunch_ptsz (hGraphExec). */
#ifndef VARIANTS_H
#define VARIANTS_H
typedef enum vr_result { VR_SUCCESS = 0, VR_MISSING = 1 } vr_result_t;
typedef struct vr_exec_st *vr_exec_t;
typedef struct vr_stream_st *vr_stream_t;

vr_result_t vrLaunch(vr_exec_t hGraph, vr_stream_t hStream);
vr_result_t vrLaunch_ptsz(vr_exec_t hGraphExec, vr_stream_t hStream);
/* the variant has another type where the base has the handle */
vr_result_t vrBad(vr_exec_t hExec, vr_stream_t hStream);
vr_result_t vrBad_ptsz(vr_stream_t hStream, vr_exec_t hOther);
#endif
