/* Written for cudagen's side-by-side run, not NVIDIA's: gocu v0.7.5 calls three
 * driver entry points newer than the 12.4 header it is built against here
 * (cuCtxRecordEvent and cuCtxWaitEvent from 12.5, cuStreamGetDevice from
 * 12.8). This wrapper includes the real header and declares them; the
 * benchmark calls none of them. */
#include_next <cuda.h>
#ifdef __cplusplus
extern "C" {
#endif
CUresult CUDAAPI cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent);
CUresult CUDAAPI cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent);
CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device);
#ifdef __cplusplus
}
#endif
