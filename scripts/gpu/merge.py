# Merge the per-workload JSON results of a split GPU run into one file.
# Usage: merge.py OUT.json DIR...
import json, sys, glob, os
out, dirs = sys.argv[1], sys.argv[2:]
merged = None
for d in dirs:
    for f in sorted(glob.glob(os.path.join(d, '*.json'))):
        try:
            r = json.load(open(f))
        except Exception as e:
            print('skip', f, e); continue
        if merged is None:
            merged = r
            continue
        merged['rows'] = merged.get('rows', []) + r.get('rows', [])
        for k in ('deadlocks',):
            if k in r and r[k]:
                merged[k] = (merged.get(k) or []) + r[k]
if merged is None:
    sys.exit('no results')
# The split files are named FILE-NN-workload.yaml (split.py): name the
# experiment file they came from.
import re
if isinstance(merged.get('source'), str):
    base = re.sub(r'-\d\d-[^/]*\.yaml$', '.yaml', merged['source']).rsplit('/', 1)[-1]
    # Keep the runner's convention: a base name stays one, a path becomes
    # the committed file's path.
    merged['source'] = base if '/' not in merged['source'] else 'configs/experiments/' + base
if 'total_rows' in merged:
    merged['total_rows'] = len(merged['rows'])
json.dump(merged, open(out, 'w'), indent=1)
print(out, len(merged['rows']), 'rows')
