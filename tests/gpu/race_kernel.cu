// The kernel of the 16-thread compile race (tests/gpu/run.sh, part a): make_ptx.sh compiles it to PTX
// 16 times, with -DID=0..15, so that every thread loads a distinct module (its own constants and entry
// point k<ID>). The unrolled loop gives the driver's JIT compiler some work (tens of milliseconds), the
// window in which unserialized loads overlap.
#ifndef ID
#define ID 0
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
extern "C" __global__ void CAT(k, ID)(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i], y = 1.0f + ID;
#pragma unroll
    for (int j = 0; j < 96; j++) {
        x = fmaf(x, 0.999f - 0.0001f * (j % 7), y * 0.001f);
        y = y * 1.0001f + __sinf(x + (float)(j * (ID + 1)));
        if ((j & 31) == ID % 32) x += __cosf(y);
    }
    out[i] = x + y;
}
