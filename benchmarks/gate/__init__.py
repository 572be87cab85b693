"""The nightly gate measured: its nights on this machine (:mod:`.gate_trial`, with a
slowdown injected by :mod:`.slowdown`) and its noise model simulated (:mod:`.gate_noise`)."""
