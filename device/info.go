package device

import "fmt"

// Info describes a GPU: what the block scheduler must respect and what the
// front end and copy engines offer. Figures for real parts live in
// configs/devices/*.yaml with their sources.
type Info struct {
	Name    string `yaml:"name"`
	SMs     int    `yaml:"sms"`
	ClockHz int64  `yaml:"clock_hz"` // SM clock
	// Per-SM limits.
	MaxThreadsPerSM   int `yaml:"max_threads_per_sm"`
	MaxWarpsPerSM     int `yaml:"max_warps_per_sm"`
	MaxBlocksPerSM    int `yaml:"max_blocks_per_sm"`
	RegistersPerSM    int `yaml:"registers_per_sm"`
	RegAllocUnit      int `yaml:"reg_alloc_unit"` // registers are allocated per warp in units of this many
	SharedPerSM       int `yaml:"shared_per_sm"`  // bytes usable by blocks
	SharedReserved    int `yaml:"shared_reserved_per_block"`
	MaxSharedPerBlock int `yaml:"max_shared_per_block"` // opt-in maximum, bytes
	// Per-block and per-thread limits.
	WarpSize             int     `yaml:"warp_size"`
	MaxThreadsPerBlock   int     `yaml:"max_threads_per_block"`
	MaxRegsPerThread     int     `yaml:"max_regs_per_thread"`
	MaxRegsPerBlock      int     `yaml:"max_regs_per_block"`
	MaxBlockDim          Dim3    `yaml:"max_block_dim"`
	MaxGridDim           Dim3    `yaml:"max_grid_dim"`
	MaxResidentGrids     int     `yaml:"max_resident_grids"`
	HardwareQueues       int     `yaml:"hardware_queues"` // CUDA_DEVICE_MAX_CONNECTIONS
	CopyEngines          int     `yaml:"copy_engines"`
	MemoryBytes          int64   `yaml:"memory_bytes"`
	MemBandwidth         float64 `yaml:"mem_bandwidth"` // bytes per second, device memory
	L2Bytes              int64   `yaml:"l2_bytes"`
	StreamPriorityLowest int     `yaml:"stream_priority_lowest"`  // 0 on current GPUs
	StreamPriorityHigh   int     `yaml:"stream_priority_highest"` // -5 on Hopper
}

// Warps is the number of warps a block of threads occupies.
func (in *Info) Warps(threads int) int {
	return (threads + in.WarpSize - 1) / in.WarpSize
}

// BlockResources is what one resident block takes from an SM.
type BlockResources struct {
	Threads   int
	Warps     int
	Registers int // after rounding to the allocation unit, per warp
	Shared    int // static + dynamic + the per-block reserve
}

// Resources computes what one block of l takes from an SM.
func (in *Info) Resources(l *Launch) BlockResources {
	threads := l.Block.Count()
	warps := in.Warps(threads)
	regs := 0
	if l.Kernel != nil && l.Kernel.Regs > 0 {
		unit := in.RegAllocUnit
		if unit <= 0 {
			unit = 1
		}
		perWarp := (l.Kernel.Regs*in.WarpSize + unit - 1) / unit * unit
		regs = perWarp * warps
	}
	shared := l.SharedMem + in.SharedReserved
	if l.Kernel != nil {
		shared += l.Kernel.StaticShared
	}
	return BlockResources{Threads: threads, Warps: warps, Registers: regs, Shared: shared}
}

// Occupancy is how many blocks of l fit on one idle SM, and the limit that
// binds (threads, warps, blocks, registers or shared memory).
func (in *Info) Occupancy(l *Launch) (blocks int, limiter string) {
	r := in.Resources(l)
	blocks, limiter = in.MaxBlocksPerSM, "blocks"
	try := func(n int, name string) {
		if n < blocks {
			blocks, limiter = n, name
		}
	}
	if r.Threads > 0 {
		try(in.MaxThreadsPerSM/r.Threads, "threads")
	}
	if r.Warps > 0 {
		try(in.MaxWarpsPerSM/r.Warps, "warps")
	}
	if r.Registers > 0 {
		try(in.RegistersPerSM/r.Registers, "registers")
	}
	if r.Shared > 0 {
		try(in.SharedPerSM/r.Shared, "shared memory")
	}
	return blocks, limiter
}

// Waves is ceil(blocks / (SMs * blocks per SM)): how many rounds of an idle
// GPU a launch needs. Wave quantization decides much of what overlapping
// kernels can gain.
func (in *Info) Waves(l *Launch) float64 {
	per, _ := in.Occupancy(l)
	if per == 0 || in.SMs == 0 {
		return 0
	}
	return float64(l.Grid.Count()) / float64(per*in.SMs)
}

// Check reports the first inconsistency in the description itself.
func (in *Info) Check() error {
	pos := []struct {
		v    int64
		name string
	}{
		{int64(in.SMs), "sms"}, {in.ClockHz, "clock_hz"},
		{int64(in.MaxThreadsPerSM), "max_threads_per_sm"}, {int64(in.MaxWarpsPerSM), "max_warps_per_sm"},
		{int64(in.MaxBlocksPerSM), "max_blocks_per_sm"}, {int64(in.RegistersPerSM), "registers_per_sm"},
		{int64(in.RegAllocUnit), "reg_alloc_unit"}, {int64(in.SharedPerSM), "shared_per_sm"},
		{int64(in.MaxSharedPerBlock), "max_shared_per_block"}, {int64(in.WarpSize), "warp_size"},
		{int64(in.MaxThreadsPerBlock), "max_threads_per_block"}, {int64(in.MaxRegsPerThread), "max_regs_per_thread"},
		{int64(in.MaxRegsPerBlock), "max_regs_per_block"}, {int64(in.MaxResidentGrids), "max_resident_grids"},
		{int64(in.HardwareQueues), "hardware_queues"}, {int64(in.CopyEngines), "copy_engines"},
		{in.MemoryBytes, "memory_bytes"},
		{int64(in.MaxBlockDim.X), "max_block_dim.x"}, {int64(in.MaxBlockDim.Y), "max_block_dim.y"}, {int64(in.MaxBlockDim.Z), "max_block_dim.z"},
		{int64(in.MaxGridDim.X), "max_grid_dim.x"}, {int64(in.MaxGridDim.Y), "max_grid_dim.y"}, {int64(in.MaxGridDim.Z), "max_grid_dim.z"},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("device %q: %s must be positive, got %d", in.Name, p.name, p.v)
		}
	}
	if in.MemBandwidth <= 0 {
		return fmt.Errorf("device %q: mem_bandwidth must be positive, got %g", in.Name, in.MemBandwidth)
	}
	if in.HardwareQueues > 32 {
		return fmt.Errorf("device %q: hardware_queues is %d; CUDA allows at most 32 (CUDA_DEVICE_MAX_CONNECTIONS)", in.Name, in.HardwareQueues)
	}
	if in.MaxSharedPerBlock+in.SharedReserved > in.SharedPerSM {
		return fmt.Errorf("device %q: max_shared_per_block %d plus the per-block reserve %d exceeds shared_per_sm %d",
			in.Name, in.MaxSharedPerBlock, in.SharedReserved, in.SharedPerSM)
	}
	if in.StreamPriorityHigh > in.StreamPriorityLowest {
		return fmt.Errorf("device %q: stream_priority_highest %d must not exceed stream_priority_lowest %d (CUDA: lower is higher priority)",
			in.Name, in.StreamPriorityHigh, in.StreamPriorityLowest)
	}
	return nil
}
