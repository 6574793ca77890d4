module github.com/gpusched/gpusched

go 1.24.0

require (
	github.com/mumax/3 v0.0.0-20261020084628-54efa12420b2
	github.com/stretchr/testify v1.12.1
	gonum.org/v1/gonum v0.17.0
	gopkg.in/yaml.v3 v3.0.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
