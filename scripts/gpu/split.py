# Split a GPU experiment file into one file per workload (all schedulers), so
# a batch can give each its own timeout. Usage: split.py FILE OUTDIR REPS
import sys, os, yaml, re
src, out, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = yaml.safe_load(open(src))
os.makedirs(out, exist_ok=True)
base = os.path.splitext(os.path.basename(src))[0]
for i, w in enumerate(d['workloads']):
    e = dict(d)
    e['workloads'] = [w]
    e['repetitions'] = min(reps, d.get('repetitions', reps))
    name = re.sub(r'[^A-Za-z0-9_.-]+', '_', w['name'])
    with open(os.path.join(out, f"{base}-{i:02d}-{name}.yaml"), 'w') as f:
        yaml.safe_dump(e, f, sort_keys=False)
