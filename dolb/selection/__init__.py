"""Online model selection: learners that choose their own complexity as the stream goes
(:mod:`dolb.selection.oms`), with the switch test of :mod:`dolb.selection.welch`."""
