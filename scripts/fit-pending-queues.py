#!/usr/bin/env python3
"""Grid fit of front_end.pending_queue_ns, pending_queue_max_ns and event_wait_ns (session 17, issue #18).

usage: fit-pending-queues.py GPUSCHED CONFIG.yaml RAW.json... (RAW: calibrate "runs over streams", e.g. from
docs/results/raw/mstream-h100{,-r2}.tgz)

Simulates calibrate "runs over streams" for every grid point (CONFIG with the three fields replaced) and prints
the mean |simulated - GPU| device time behind the gate of the two chain patterns ("paths in a chain",
"round-robin chain"; 2 and 20 us spins, 2-64 streams; fitted) and of "paths" and "layers" (checked), best last.
"""
import itertools, json, os, re, subprocess, sys, tempfile

gs, cfg, raws = sys.argv[1], sys.argv[2], sys.argv[3:]
base = open(cfg).read()


def values(path):
    return {m['name']: m['value'] for m in json.load(open(path))['measurements']}


gpu = [values(r) for r in raws]


def names(patterns):
    return [f'run over streams: device time, {p}, {spin} spins, {s} streams'
            for spin in ('2 us', '20 us') for p in patterns for s in (2, 4, 8, 16, 32, 64)]


FIT, CHECK = names(['paths in a chain', 'round-robin chain']), names(['paths', 'layers'])
tmp = tempfile.mkdtemp()


def simulate(ew, pq, mx):
    s = re.sub(r'\n  event_wait_ns: [^\n]*', f'\n  event_wait_ns: {ew}', base)
    s = re.sub(r'\n  pending_queue(_max)?_ns: [^\n]*', '', s)
    s = s.replace('\n  records_pass_queue:', f'\n  pending_queue_ns: {pq}\n  pending_queue_max_ns: {mx}\n  records_pass_queue:', 1)
    c, out = os.path.join(tmp, 'c.yaml'), os.path.join(tmp, f'{ew}-{pq}-{mx}.json')
    open(c, 'w').write(s)
    subprocess.run([gs, 'calibrate', '--device', c, '--only', 'runs over streams', '--raw', out, '--report', os.devnull],
                   stderr=subprocess.DEVNULL, check=True)
    return values(out)


def err(sim, keys):
    e = [abs(sim[k] - g[k]) / 1e3 for g in gpu for k in keys]
    return sum(e) / len(e)


res = []
for ew, pq, mx in [(1142, 0, 0)] + list(itertools.product([0, 70, 140, 400], [400, 500, 600, 700, 800, 900, 1000], [1500, 1750, 2000, 2250, 2500])):
    sim = simulate(ew, pq, mx)
    res.append((err(sim, FIT), err(sim, CHECK), ew, pq, mx))
for r in sorted(res, reverse=True):
    print(f'event_wait {r[2]:5} pending_queue {r[3]:5} max {r[4]:5}: chains mean |sim-GPU| {r[0]:6.1f} us, paths+layers {r[1]:6.1f} us')
