"""The sweep engine measured: scaling on 1 and 2 workers (:mod:`.scale`), a simulated
cluster of sleeping cells (:mod:`.simulated`) against its cost model (:mod:`.cost_model`),
a worker's overhead, contention, a cold start, the result store, the stream reader, an
object store and a halving's timeline, one module a mode."""
