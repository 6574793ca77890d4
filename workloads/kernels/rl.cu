// rl: a batched rigid-body physics step (workloads/rl, the rl-physics
// workload). Bodies are particle clusters held rigid by distance
// constraints, solved by position-based dynamics with Jacobi averaging;
// shapes are spheres, capsules and boxes on the plane z = 0.
//
// Every kernel works on one group of environments: pointer arguments point
// at the group's section and particle indices are local to it. Each kernel
// mirrors a function of workloads/rl/physics.go operation for operation:
// every product is __fmul_rn (never contracted into an FMA), division and
// square root are the correctly rounded __fdiv_rn and __fsqrt_rn, and sums
// run in the same order, so a GPU step matches the Go reference bit for bit
// and every schedule of the kernels computes the same bits (no atomics).
// Contact corrections are gathered per particle and written to
// per-contact-type delta buffers, which rl_apply sums in a fixed order; the
// rods are solved per environment, in order, by one thread.

#define MUL(a, b) __fmul_rn((a), (b))
#define DIV(a, b) __fdiv_rn((a), (b))

#define CONTACT_GAP 0.05f
#define FRICTION 0.8f
#define RELAXATION 1.0f
#define SEG_EPSILON 1e-9f
#define DIST_EPSILON 1e-6f
#define CONTACT_FLOATS 8

struct v3 { float x, y, z; };

static __device__ __forceinline__ v3 load3(const float* a, int i) { v3 r = {a[3 * i], a[3 * i + 1], a[3 * i + 2]}; return r; }
static __device__ __forceinline__ void store3(float* a, int i, v3 v) { a[3 * i] = v.x; a[3 * i + 1] = v.y; a[3 * i + 2] = v.z; }
static __device__ __forceinline__ v3 add3(v3 a, v3 b) { v3 r = {a.x + b.x, a.y + b.y, a.z + b.z}; return r; }
static __device__ __forceinline__ v3 sub3(v3 a, v3 b) { v3 r = {a.x - b.x, a.y - b.y, a.z - b.z}; return r; }
static __device__ __forceinline__ v3 scale3(v3 a, float f) { v3 r = {MUL(a.x, f), MUL(a.y, f), MUL(a.z, f)}; return r; }
static __device__ __forceinline__ float dot3(v3 a, v3 b) { return MUL(a.x, b.x) + MUL(a.y, b.y) + MUL(a.z, b.z); }
static __device__ __forceinline__ v3 lerp3(v3 a, v3 b, float s) { return add3(a, scale3(sub3(b, a), s)); }
static __device__ __forceinline__ float clamp01(float x) { return fminf(fmaxf(x, 0.0f), 1.0f); }
static __device__ __forceinline__ void store_delta(float* d, int i, v3 v, float cnt) { d[4 * i] = v.x; d[4 * i + 1] = v.y; d[4 * i + 2] = v.z; d[4 * i + 3] = cnt; }

static __device__ __forceinline__ int tid() { return blockIdx.x * blockDim.x + threadIdx.x; }

// vel += act (the policy's action as a velocity change); n particles.
extern "C" __global__ void rl_actuate(float* vel, const float* act, int n) {
    int i = tid();
    if (i >= 3 * n) return;
    vel[i] = vel[i] + act[i];
}

// Semi-implicit Euler prediction: vel.z += gdt; prev = pos; pos += vel*dt.
extern "C" __global__ void rl_integrate(float* pos, float* prev, float* vel, int n, float gdt, float dt) {
    int i = tid();
    if (i >= n) return;
    v3 v = load3(vel, i);
    v.z = v.z + gdt;
    v3 x = load3(pos, i);
    store3(vel, i, v);
    store3(prev, i, x);
    store3(pos, i, add3(x, scale3(v, dt)));
}

// Broad phase: grown axis-aligned boxes of each candidate segment pair.
extern "C" __global__ void rl_broadphase(const float* pos, const int* pairIdx, const float* pairRad, unsigned* mask, int npairs) {
    int p = tid();
    if (p >= npairs) return;
    v3 a0 = load3(pos, pairIdx[4 * p]), a1 = load3(pos, pairIdx[4 * p + 1]);
    v3 b0 = load3(pos, pairIdx[4 * p + 2]), b1 = load3(pos, pairIdx[4 * p + 3]);
    float ra = pairRad[2 * p] + CONTACT_GAP;
    float rb = pairRad[2 * p + 1];
    float A0[3] = {a0.x, a0.y, a0.z}, A1[3] = {a1.x, a1.y, a1.z};
    float B0[3] = {b0.x, b0.y, b0.z}, B1[3] = {b1.x, b1.y, b1.z};
    bool overlap = true;
    for (int d = 0; d < 3; d++) {
        float loA = fminf(A0[d], A1[d]) - ra, hiA = fmaxf(A0[d], A1[d]) + ra;
        float loB = fminf(B0[d], B1[d]) - rb, hiB = fmaxf(B0[d], B1[d]) + rb;
        if (loA > hiB || loB > hiA) overlap = false;
    }
    mask[p] = overlap ? 1u : 0u;
}

// Zeroes the group's delta buffers (one per contact type).
extern "C" __global__ void rl_clear(float* d0, float* d1, float* d2, float* d3, float* d4, int n) {
    int i = tid();
    if (i >= 4 * n) return;
    d0[i] = 0.0f; d1[i] = 0.0f; d2[i] = 0.0f; d3[i] = 0.0f; d4[i] = 0.0f;
}

static __device__ __forceinline__ void narrow_plane(const float* pos, const float* radius, const int* list, float* contacts, int count) {
    int k = tid();
    if (k >= count) return;
    int i = list[k];
    float* c = contacts + CONTACT_FLOATS * k;
    c[0] = 0.0f; c[1] = 0.0f; c[2] = 1.0f; c[3] = 0.0f; c[4] = 0.0f;
    c[5] = pos[3 * i + 2] - radius[i];
    c[6] = 0.0f; c[7] = 0.0f;
}

extern "C" __global__ void rl_sphere_plane(const float* pos, const float* radius, const int* list, float* contacts, int count) { narrow_plane(pos, radius, list, contacts, count); }
extern "C" __global__ void rl_capsule_plane(const float* pos, const float* radius, const int* list, float* contacts, int count) { narrow_plane(pos, radius, list, contacts, count); }
extern "C" __global__ void rl_box_plane(const float* pos, const float* radius, const int* list, float* contacts, int count) { narrow_plane(pos, radius, list, contacts, count); }

// Closest points of segments p1-q1 and p2-q2 (Ericson 5.1.9).
static __device__ void closest(v3 p1, v3 q1, v3 p2, v3 q2, float* sp, float* tp) {
    v3 d1 = sub3(q1, p1), d2 = sub3(q2, p2), r = sub3(p1, p2);
    float a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r);
    float s = 0.0f, t = 0.0f;
    if (a <= SEG_EPSILON && e <= SEG_EPSILON) { *sp = 0.0f; *tp = 0.0f; return; }
    if (a <= SEG_EPSILON) { *sp = 0.0f; *tp = clamp01(DIV(f, e)); return; }
    float c = dot3(d1, r);
    if (e <= SEG_EPSILON) { *sp = clamp01(DIV(-c, a)); *tp = 0.0f; return; }
    float b = dot3(d1, d2);
    float denom = MUL(a, e) - MUL(b, b);
    if (denom != 0.0f) s = clamp01(DIV(MUL(b, f) - MUL(c, e), denom));
    t = DIV(MUL(b, s) + f, e);
    if (t < 0.0f) { t = 0.0f; s = clamp01(DIV(-c, a)); }
    else if (t > 1.0f) { t = 1.0f; s = clamp01(DIV(b - c, a)); }
    *sp = s; *tp = t;
}

static __device__ __forceinline__ void narrow_segments(const float* pos, const int* pairIdx, const float* pairRad, const int* list, float* contacts, int count) {
    int k = tid();
    if (k >= count) return;
    int p = list[k];
    v3 a0 = load3(pos, pairIdx[4 * p]), a1 = load3(pos, pairIdx[4 * p + 1]);
    v3 b0 = load3(pos, pairIdx[4 * p + 2]), b1 = load3(pos, pairIdx[4 * p + 3]);
    float s, t;
    closest(a0, a1, b0, b1, &s, &t);
    v3 d = sub3(lerp3(a0, a1, s), lerp3(b0, b1, t));
    float dist = __fsqrt_rn(dot3(d, d));
    v3 n = {0.0f, 0.0f, 1.0f};
    if (dist > DIST_EPSILON) { n.x = DIV(d.x, dist); n.y = DIV(d.y, dist); n.z = DIV(d.z, dist); }
    float* c = contacts + CONTACT_FLOATS * k;
    c[0] = n.x; c[1] = n.y; c[2] = n.z; c[3] = s; c[4] = t;
    c[5] = dist - (pairRad[2 * p] + pairRad[2 * p + 1]);
    c[6] = 0.0f; c[7] = 0.0f;
}

extern "C" __global__ void rl_capsule_capsule(const float* pos, const int* pairIdx, const float* pairRad, const int* list, float* contacts, int count) { narrow_segments(pos, pairIdx, pairRad, list, contacts, count); }
extern "C" __global__ void rl_sphere_capsule(const float* pos, const int* pairIdx, const float* pairRad, const int* list, float* contacts, int count) { narrow_segments(pos, pairIdx, pairRad, list, contacts, count); }

// Plane contact: push out along the normal, cancel tangential displacement
// within the friction cone.
static __device__ __forceinline__ void solve_plane(const float* pos, const float* prev, const float* radius, const float* invmass, const int* list, const float* contacts, float* delta, int count) {
    int k = tid();
    if (k >= count) return;
    int i = list[k];
    const float* c = contacts + CONTACT_FLOATS * k;
    v3 n = {c[0], c[1], c[2]};
    v3 x = load3(pos, i);
    float pen = dot3(x, n) - radius[i];
    v3 corr = {0.0f, 0.0f, 0.0f};
    float cnt = 0.0f;
    if (pen < 0.0f && invmass[i] > 0.0f) {
        corr = scale3(n, -pen);
        v3 disp = sub3(x, load3(prev, i));
        v3 tan = sub3(disp, scale3(n, dot3(disp, n)));
        float tl = __fsqrt_rn(dot3(tan, tan));
        if (tl > 0.0f) {
            float f = fminf(1.0f, DIV(MUL(FRICTION, -pen), tl));
            corr = sub3(corr, scale3(tan, f));
        }
        cnt = 1.0f;
    }
    store_delta(delta, i, corr, cnt);
}

extern "C" __global__ void rl_solve_sphere_plane(const float* pos, const float* prev, const float* radius, const float* invmass, const int* list, const float* contacts, float* delta, int count) { solve_plane(pos, prev, radius, invmass, list, contacts, delta, count); }
extern "C" __global__ void rl_solve_capsule_plane(const float* pos, const float* prev, const float* radius, const float* invmass, const int* list, const float* contacts, float* delta, int count) { solve_plane(pos, prev, radius, invmass, list, contacts, delta, count); }
extern "C" __global__ void rl_solve_box_plane(const float* pos, const float* prev, const float* radius, const float* invmass, const int* list, const float* contacts, float* delta, int count) { solve_plane(pos, prev, radius, invmass, list, contacts, delta, count); }

// The correction end code (0..3: a0 a1 b0 b1) of pair p receives.
static __device__ bool segment_correction(const float* pos, const float* invmass, const int* pairIdx, const float* pairRad, int p, const float* c, int code, v3* out) {
    int a0 = pairIdx[4 * p], a1 = pairIdx[4 * p + 1], b0 = pairIdx[4 * p + 2], b1 = pairIdx[4 * p + 3];
    v3 n = {c[0], c[1], c[2]};
    float s = c[3], t = c[4];
    v3 pa = lerp3(load3(pos, a0), load3(pos, a1), s);
    v3 pb = lerp3(load3(pos, b0), load3(pos, b1), t);
    float pen = dot3(sub3(pa, pb), n) - (pairRad[2 * p] + pairRad[2 * p + 1]);
    if (pen >= 0.0f) return false;
    float s1 = 1.0f - s, t1 = 1.0f - t;
    float wa0 = invmass[a0], wa1 = invmass[a1], wb0 = invmass[b0], wb1 = invmass[b1];
    float w = MUL(MUL(s1, s1), wa0) + MUL(MUL(s, s), wa1) + MUL(MUL(t1, t1), wb0) + MUL(MUL(t, t), wb1);
    if (w <= 0.0f) return false;
    float lam = DIV(-pen, w);
    float coef;
    switch (code) {
    case 0: coef = MUL(s1, wa0); break;
    case 1: coef = MUL(s, wa1); break;
    case 2: coef = -MUL(t1, wb0); break;
    default: coef = -MUL(t, wb1); break;
    }
    *out = scale3(n, MUL(lam, coef));
    return true;
}

// gather: rowptr[nrows+1], particle[nrows], entries k*4+code.
static __device__ __forceinline__ void solve_segments(const float* pos, const float* invmass, const int* pairIdx, const float* pairRad, const int* list, const int* gather, const float* contacts, float* delta, int nrows) {
    int r = tid();
    if (r >= nrows) return;
    const int* rowptr = gather;
    const int* parts = gather + nrows + 1;
    const int* entries = gather + 2 * nrows + 1;
    v3 sum = {0.0f, 0.0f, 0.0f};
    float cnt = 0.0f;
    for (int e = rowptr[r]; e < rowptr[r + 1]; e++) {
        int k = entries[e] >> 2, code = entries[e] & 3;
        v3 corr;
        if (segment_correction(pos, invmass, pairIdx, pairRad, list[k], contacts + CONTACT_FLOATS * k, code, &corr)) {
            sum = add3(sum, corr);
            cnt = cnt + 1.0f;
        }
    }
    store_delta(delta, parts[r], sum, cnt);
}

extern "C" __global__ void rl_solve_capsule_capsule(const float* pos, const float* invmass, const int* pairIdx, const float* pairRad, const int* list, const int* gather, const float* contacts, float* delta, int nrows) { solve_segments(pos, invmass, pairIdx, pairRad, list, gather, contacts, delta, nrows); }
extern "C" __global__ void rl_solve_sphere_capsule(const float* pos, const float* invmass, const int* pairIdx, const float* pairRad, const int* list, const int* gather, const float* contacts, float* delta, int nrows) { solve_segments(pos, invmass, pairIdx, pairRad, list, gather, contacts, delta, nrows); }

// Distance constraints: one thread per environment walks its rods in order
// and corrects both ends in place (Gauss-Seidel within an environment).
// rods holds a b pairs of environment-local particle indices.
extern "C" __global__ void rl_solve_rods(float* pos, const float* invmass, const int* rods, const float* rest, int envs, int per, int nrods) {
    int e = tid();
    if (e >= envs) return;
    int base = e * per;
    for (int r = 0; r < nrods; r++) {
        int a = base + rods[2 * r], b = base + rods[2 * r + 1];
        v3 xa = load3(pos, a), xb = load3(pos, b);
        float wa = invmass[a], wb = invmass[b];
        v3 d = sub3(xa, xb);
        float l = __fsqrt_rn(dot3(d, d));
        float ws = wa + wb;
        if (l > DIST_EPSILON && ws > 0.0f) {
            float g = DIV(DIV(l - rest[r], l), ws);
            store3(pos, a, sub3(xa, scale3(d, MUL(g, wa))));
            store3(pos, b, add3(xb, scale3(d, MUL(g, wb))));
        }
    }
}

// pos += RELAXATION/count * (sum of the contact corrections), in the fixed
// order sphere-plane, capsule-plane, box-plane, capsule-capsule,
// sphere-capsule.
extern "C" __global__ void rl_apply(float* pos, const float* d0, const float* d1, const float* d2, const float* d3, const float* d4, int n) {
    int i = tid();
    if (i >= n) return;
    const float* ds[5] = {d0, d1, d2, d3, d4};
    v3 sum = {0.0f, 0.0f, 0.0f};
    float cnt = 0.0f;
    for (int t = 0; t < 5; t++) {
        v3 d = {ds[t][4 * i], ds[t][4 * i + 1], ds[t][4 * i + 2]};
        sum = add3(sum, d);
        cnt = cnt + ds[t][4 * i + 3];
    }
    if (cnt > 0.0f) store3(pos, i, add3(load3(pos, i), scale3(sum, DIV(RELAXATION, cnt))));
}

// vel = (pos - prev) / dt, damped.
extern "C" __global__ void rl_velocity(const float* pos, const float* prev, float* vel, int n, float invdt, float damp) {
    int i = tid();
    if (i >= n) return;
    v3 v = scale3(sub3(load3(pos, i), load3(prev, i)), invdt);
    store3(vel, i, scale3(v, damp));
}

// Per environment: mean position and mean x velocity.
extern "C" __global__ void rl_observe(const float* pos, const float* vel, float* obs, int envs, int per) {
    int e = tid();
    if (e >= envs) return;
    v3 s = {0.0f, 0.0f, 0.0f};
    float vx = 0.0f;
    for (int j = 0; j < per; j++) {
        int i = e * per + j;
        s = add3(s, load3(pos, i));
        vx = vx + vel[3 * i];
    }
    float fn = (float)per;
    obs[4 * e] = DIV(s.x, fn); obs[4 * e + 1] = DIV(s.y, fn); obs[4 * e + 2] = DIV(s.z, fn); obs[4 * e + 3] = DIV(vx, fn);
}
