# gpusched. Targets live in mk/*.mk, one file per area.
include mk/*.mk
