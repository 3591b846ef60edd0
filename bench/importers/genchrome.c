/* genchrome.c: a large PyTorch-profiler-like (Kineto) Chrome trace for the importer
 * benchmark (bench/importers/run.sh).
 *
 * usage: genchrome BYTES SEED > trace.json
 * Writes {"schemaVersion":1, "deviceProperties":[...], "traceEvents":[...]} in Kineto's
 * layout (one event over a few indented lines, timestamps in microseconds with three
 * decimals) until about BYTES bytes: per training step, each of 4 CPU threads runs
 * nested operators (cpu_op X events, 1-4 levels, with args), CUDA runtime launches
 * (cuda_runtime X with a correlation id), the launched kernels and copies on two GPU
 * streams (kernel / gpu_memcpy X on pid 0, tids 7 and 20, queued behind each other), the
 * ac2g flow pair of each launch, a stream synchronisation now and then, B/E python
 * function slices, instant events and counters; metadata last, as Kineto writes it.
 * Deterministic for a seed. Prints "events N" on stderr (the records written).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint64_t uniform(uint64_t n) { return next() % n; }

static uint64_t written, nevents;
static const char *sep = "\n";

static void out(const char *s, size_t n)
{
    fwrite(s, 1, n, stdout);
    written += n;
}

/* one event; ts and dur in ns, printed as us with three decimals */
static void x_event(const char *cat, const char *name, int pid, int tid, uint64_t ts, uint64_t dur, const char *args)
{
    char b[1024];
    int n = snprintf(b, sizeof b,
                     "%s  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
                     "    \"ts\": %" PRIu64 ".%03" PRIu64 ", \"dur\": %" PRIu64 ".%03" PRIu64 ",\n    \"args\": {\n      %s\n    }\n  }",
                     sep, cat, name, pid, tid, ts / 1000, ts % 1000, dur / 1000, dur % 1000, args);
    out(b, (size_t)n);
    sep = ",\n";
    nevents++;
}

static void simple_event(const char *fmt_body)
{
    char b[512];
    int n = snprintf(b, sizeof b, "%s  %s", sep, fmt_body);
    out(b, (size_t)n);
    sep = ",\n";
    nevents++;
}

static const char *const ops[] = {"aten::linear", "aten::conv2d", "aten::relu", "aten::batch_norm", "aten::add_",
                                  "aten::matmul", "aten::softmax", "aten::dropout", "aten::layer_norm", "aten::copy_"};
static const char *const subops[] = {"aten::addmm", "aten::convolution", "aten::clamp_min", "aten::native_batch_norm",
                                     "aten::empty", "aten::mm", "aten::_softmax", "aten::mul", "aten::view"};
static const char *const kernels[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)",
    "volta_sgemm_128x64_nn", "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float> > >(at::native::ReduceOp<float>)",
    "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: genchrome BYTES SEED\n");
        return 2;
    }
    uint64_t target = strtoull(argv[1], NULL, 10);
    rng = strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    const char *head = "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": "
                       "\"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85198045184,\n      \"computeMajor\": 8, "
                       "\"computeMinor\": 0, \"numSms\": 108\n    }\n  ],\n  \"traceEvents\": [";
    out(head, strlen(head));
    const int pid = 4242, nthreads = 4, streams[2] = {7, 20};
    uint64_t tcpu[4], tgpu[2] = {0, 0};
    uint64_t base = UINT64_C(1700000000000000000);
    for (int t = 0; t < nthreads; t++)
        tcpu[t] = base + (uint64_t)t * 1000;
    tgpu[0] = tgpu[1] = base;
    uint64_t corr = 1, ext = 1, step = 0;
    char args[512], ev[512];
    while (written < target) {
        step++;
        for (int t = 0; t < nthreads && written < target; t++) {
            int tid = pid + t;
            /* a python function around a few operators (B/E) */
            uint64_t fstart = tcpu[t];
            snprintf(ev, sizeof ev,
                     "{\n    \"ph\": \"B\", \"cat\": \"python_function\", \"name\": \"nn.Module: Block_%d\", \"pid\": %d, "
                     "\"tid\": %d,\n    \"ts\": %" PRIu64 ".%03" PRIu64 "\n  }",
                     (int)(step % 12), pid, tid, fstart / 1000, fstart % 1000);
            simple_event(ev);
            tcpu[t] += 1000 + uniform(3000);
            int nops = 2 + (int)uniform(4);
            for (int o = 0; o < nops; o++) {
                uint64_t s = tcpu[t];
                const char *op = ops[uniform(10)];
                /* children laid out inside */
                uint64_t cur = s + 500 + uniform(2000);
                int nsub = 1 + (int)uniform(3);
                for (int k = 0; k < nsub; k++) {
                    uint64_t ss = cur;
                    const char *sub = subops[uniform(9)];
                    uint64_t lcur = ss + 300 + uniform(1500);
                    /* the launch */
                    uint64_t ls = lcur, ld = 3000 + uniform(12000);
                    snprintf(args, sizeof args, "\"External id\": %" PRIu64 ", \"cbid\": 211, \"correlation\": %" PRIu64, ext,
                             corr);
                    x_event("cuda_runtime", "cudaLaunchKernel", pid, tid, ls, ld, args);
                    snprintf(ev, sizeof ev,
                             "{\n    \"ph\": \"s\", \"id\": %" PRIu64 ", \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRIu64
                             ".%03" PRIu64 ", \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }",
                             corr, pid, tid, ls / 1000, ls % 1000);
                    simple_event(ev);
                    /* the kernel, queued on its stream */
                    int si = (int)uniform(2);
                    uint64_t ks = ls + 2000 + uniform(8000);
                    if (ks < tgpu[si])
                        ks = tgpu[si] + 500 + uniform(1500);
                    uint64_t kd = 5000 + uniform(200000);
                    int memcpy_ = uniform(20) == 0;
                    snprintf(args, sizeof args,
                             "\"External id\": %" PRIu64 ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": %d, "
                             "\"correlation\": %" PRIu64 ", \"registers per thread\": %d, \"shared memory\": %d, \"grid\": [%d, 1, 1], "
                             "\"block\": [256, 1, 1]",
                             ext, streams[si], corr, 32 + (int)uniform(96), (int)uniform(4) * 16384, 1 + (int)uniform(4096));
                    x_event(memcpy_ ? "gpu_memcpy" : "kernel", memcpy_ ? "Memcpy HtoD (Pinned -> Device)" : kernels[uniform(5)],
                            0, streams[si], ks, kd, args);
                    snprintf(ev, sizeof ev,
                             "{\n    \"ph\": \"f\", \"id\": %" PRIu64 ", \"pid\": 0, \"tid\": %d,\n    \"ts\": %" PRIu64
                             ".%03" PRIu64 ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
                             corr, streams[si], ks / 1000, ks % 1000);
                    simple_event(ev);
                    tgpu[si] = ks + kd;
                    corr++;
                    lcur = ls + ld + 200 + uniform(800);
                    uint64_t sd = lcur - ss + uniform(500);
                    snprintf(args, sizeof args, "\"External id\": %" PRIu64 ", \"Ev Idx\": %" PRIu64, ext, ext);
                    x_event("cpu_op", sub, pid, tid, ss, sd, args);
                    ext++;
                    cur = ss + sd + 100 + uniform(400);
                }
                uint64_t d = cur - s + 200 + uniform(1000);
                snprintf(args, sizeof args, "\"External id\": %" PRIu64 ", \"Sequence number\": %" PRIu64 ", \"Fwd thread id\": 0",
                         ext, step);
                x_event("cpu_op", op, pid, tid, s, d, args);
                ext++;
                tcpu[t] = s + d + 300 + uniform(2000);
                if (uniform(8) == 0) {
                    snprintf(ev, sizeof ev,
                             "{\n    \"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRIu64
                             ".%03" PRIu64 ",\n    \"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Bytes\": %d}\n  }",
                             pid, tid, tcpu[t] / 1000, tcpu[t] % 1000, (int)uniform(1 << 20));
                    simple_event(ev);
                }
            }
            /* now and then a stream synchronisation that waits for the GPU */
            if (uniform(6) == 0) {
                int si = (int)uniform(2);
                uint64_t ss = tcpu[t];
                uint64_t se = tgpu[si] > ss ? tgpu[si] + 2000 : ss + 3000;
                snprintf(args, sizeof args, "\"External id\": %" PRIu64 ", \"cbid\": 131, \"correlation\": %" PRIu64, ext,
                         corr++);
                x_event("cuda_runtime", "cudaStreamSynchronize", pid, tid, ss, se - ss, args);
                ext++;
                tcpu[t] = se + 500;
            }
            uint64_t fend = tcpu[t] + 200;
            snprintf(ev, sizeof ev,
                     "{\n    \"ph\": \"E\", \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRIu64 ".%03" PRIu64 "\n  }", pid,
                     tid, fend / 1000, fend % 1000);
            simple_event(ev);
            tcpu[t] = fend + 100 + uniform(500);
            if (uniform(4) == 0) {
                snprintf(ev, sizeof ev,
                         "{\n    \"ph\": \"C\", \"name\": \"memory\", \"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRIu64
                         ".%03" PRIu64 ",\n    \"args\": {\"allocated\": %d}\n  }",
                         pid, tid, tcpu[t] / 1000, tcpu[t] % 1000, (int)uniform(1 << 30));
                simple_event(ev);
            }
        }
    }
    /* metadata, last as Kineto writes it */
    char m[512];
    snprintf(m, sizeof m, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"python\"}}", pid);
    simple_event(m);
    simple_event("{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"python\"}}");
    simple_event("{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 0, \"args\": {\"labels\": \"GPU 0\"}}");
    for (int t = 0; t < nthreads; t++) {
        snprintf(m, sizeof m,
                 "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"thread %d (python)\"}}",
                 pid, pid + t, pid + t);
        simple_event(m);
    }
    for (int s = 0; s < 2; s++) {
        snprintf(m, sizeof m,
                 "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": %d, \"args\": {\"name\": \"stream %d \"}}",
                 streams[s], streams[s]);
        simple_event(m);
    }
    out("\n  ]\n}\n", 6);
    fflush(stdout);
    fprintf(stderr, "events %" PRIu64 "\n", nevents);
    return 0;
}
