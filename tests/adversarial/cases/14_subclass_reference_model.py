# tries: import the reference Model and subclass it
# expect: static_rejected
# preamble: relu_ext
# message: reference

from kforge_reference import Model


class ModelNew(Model):
    pass
