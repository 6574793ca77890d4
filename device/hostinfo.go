package device

// InfoHost is a Host that describes the device it drives (what Device.Info
// returns), so that a strategy whose choices depend on the hardware, such as
// cuSync's policy rule from wave counts (sched/tilesync), can read it from
// the host thread it is given. Find it by type assertion; a Host without it
// makes such a strategy ask for its choices explicitly.
type InfoHost interface {
	DeviceInfo() Info
}
