// The kernels bench/jitprobe loads as PTX (nvcc -ptx -arch=compute_75 k.cu).
extern "C" __global__ void k1(int *o) { o[threadIdx.x] = threadIdx.x + 7; }
extern "C" __global__ void k2(int *o) { o[threadIdx.x] = threadIdx.x * 3; }
