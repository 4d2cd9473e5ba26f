"""Running the evaluation worker in a child process that cannot hurt the caller.

Owns the parent's side of a job: the child's session, its deadlines and memory watchdog, killing it and
everything it started (`sandbox`), and spare workers started ahead with torch imported (`spare`). It never
runs candidate code itself.

May import: the standard library, `kforge_core` (REPO_ROOT) and the shared vocabulary of
`kforge_core.evaluation` (`result`, `settings`, `outcome`); never `building`, `judging` or `worker`: what the
child does is the child's business.
"""
