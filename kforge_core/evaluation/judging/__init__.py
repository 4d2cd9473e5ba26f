"""Judging a candidate: the rules a verdict rests on, and the measurements they read.

Owns the static rules on the source (`static_checks`), runtime anti-cheat checks (`anticheat`,
`trial_checks`), value fingerprints (`fingerprint`), output comparison (`correctness`), the timing protocol
(`timing`), the checks after timing (`honesty`), whose kernels did the device time (`device_time`) and the
parent's clock cross-check (`parent_clock`). It decides; it does not run processes or build anything.

May import: the standard library, torch, `kforge_core.backends` (a backend's rules) and the shared vocabulary
of `kforge_core.evaluation` (`result`, `settings`, `outcome`); never `building`, `isolation` or `worker`.
"""
