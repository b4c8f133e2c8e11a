module capacity-extender/bench/noop_extender

go 1.19
