"""Studies built on many runs: parameter sweeps (:mod:`.sweep`), recommendations from them
(:mod:`.recommend`), validation against published and exact figures (:mod:`.validate`), and
queueing-theory predictions (:mod:`.analytic`).
"""
